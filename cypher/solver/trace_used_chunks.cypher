// Trace: (:KagStep)-[:USED {rank, score}]->(:Chunk) for the chunks a step retrieved or cited.
UNWIND $rows AS row
MATCH (step:KagStep {id: row.step})
MATCH (chunk:Chunk {id: row.id})
CREATE (step)-[:USED {rank: row.rank, score: row.score}]->(chunk)
