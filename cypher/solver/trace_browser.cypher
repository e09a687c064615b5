// The reasoning path of one kag-neo4j run, for Neo4j Browser: the run and its steps, what each
// step used (chunks, entities) and read from (DEPENDS_ON), the graph facts between the entities a
// step used, and the cited chunks with their documents. Set the id first: :param run_id => '<id>'
MATCH path = (:KagRun {id: $run_id})-[:HAS_STEP]->(:KagStep)
RETURN path
UNION
MATCH (:KagRun {id: $run_id})-[:HAS_STEP]->(step:KagStep)
MATCH path = (step)-[:USED|DEPENDS_ON]->()
RETURN path
UNION
MATCH (:KagRun {id: $run_id})-[:HAS_STEP]->(step:KagStep)-[:USED]->(a:Entity)
MATCH path = (a)-[r]-(:Entity)<-[:USED]-(step)
WHERE type(r) <> 'USED'
RETURN path
UNION
MATCH path = (:KagRun {id: $run_id})-[:CITES]->(:Chunk)-[:PART_OF]->(:Document)
RETURN path
