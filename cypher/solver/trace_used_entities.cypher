// Trace: (:KagStep)-[:USED {rank, score}]->(:Entity) for the entities a step linked or reached.
UNWIND $rows AS row
MATCH (step:KagStep {id: row.step})
MATCH (entity:Entity {id: row.id})
CREATE (step)-[:USED {rank: row.rank, score: row.score}]->(entity)
