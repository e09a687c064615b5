// What a document's chunks support: its chunk ids, the entities/events they mention, and the
// concepts those entities belong to (each may lose its last support when the document goes).
MATCH (d:Document {id: $doc_id})
OPTIONAL MATCH (c:Chunk)-[:PART_OF]->(d)
WITH d, collect(c) AS chunks
CALL (chunks) {
  UNWIND chunks AS c
  MATCH (n)-[:MENTIONED_IN]->(c)
  RETURN collect(DISTINCT CASE WHEN n:Entity THEN n.id END) AS entities,
         collect(DISTINCT CASE WHEN n:Event THEN n.id END) AS events
}
CALL (entities) {
  UNWIND entities AS id
  MATCH (:Entity {id: id})-[:BELONGS_TO]->(k:Concept)
  RETURN collect(DISTINCT k.id) AS concepts
}
RETURN [c IN chunks | c.id] AS chunk_ids, entities, events, concepts
