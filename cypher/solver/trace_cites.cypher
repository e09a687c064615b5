// Trace: (:KagRun)-[:CITES {rank}]->(:Chunk) for the chunks the answer cites.
MATCH (run:KagRun {id: $run_id})
UNWIND $rows AS row
MATCH (chunk:Chunk {id: row.id})
CREATE (run)-[:CITES {rank: row.rank}]->(chunk)
