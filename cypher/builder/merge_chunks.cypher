// Chunks with their PART_OF edge and the mutual index: (:Entity|:Event)-[:MENTIONED_IN {count, names}]->(:Chunk);
// an entity's mention also keeps what its document says about it (description, semantic_type,
// properties_json), from which `kag-neo4j delete` recomputes a surviving entity.
// Entities and events are written before this statement; the vector goes through
// db.create.setNodeVectorProperty (stored as float32).
UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
MERGE (c:Chunk {id: row.id})
SET c.text = row.text, c.title = row.title, c.title_path = row.title_path, c.position = row.position,
    c.paragraph = row.paragraph, c.index = row.index, c.document_id = row.document_id
MERGE (c)-[:PART_OF]->(d)
WITH c, row
CALL (c, row) {
  UNWIND row.mentions AS m
  MATCH (e:Entity {id: m.node})
  MERGE (e)-[x:MENTIONED_IN]->(c)
  SET x.count = m.count, x.names = m.names, x.description = m.description, x.semantic_type = m.semantic_type,
      x.properties_json = m.properties_json
}
CALL (c, row) {
  UNWIND row.event_mentions AS m
  MATCH (v:Event {id: m.node})
  MERGE (v)-[x:MENTIONED_IN]->(c)
  SET x.count = m.count, x.names = m.names
}
WITH c, row
WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
