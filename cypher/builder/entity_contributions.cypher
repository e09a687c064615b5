// What each document says about the given entities (description, semantic type, extracted
// properties), in load order: the input from which a delete recomputes a surviving entity.
UNWIND $ids AS id
MATCH (n:Entity {id: id})-[m:MENTIONED_IN]->(c:Chunk)-[:PART_OF]->(d:Document)
WHERE m.description IS NOT NULL OR m.semantic_type IS NOT NULL OR m.properties_json IS NOT NULL
RETURN n.id AS id, d.id AS doc, m.description AS description, m.semantic_type AS semantic_type,
       m.properties_json AS properties_json
ORDER BY id, coalesce(d.load_seq, 0), doc, c.position
