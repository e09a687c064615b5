// Chunks with their PART_OF edge; the vector goes through db.create.setNodeVectorProperty (float32).
UNWIND $rows AS row
MATCH (d:Document {id: row.document_id})
MERGE (c:Chunk {id: row.id})
SET c.text = row.text, c.title = row.title, c.title_path = row.title_path, c.position = row.position,
    c.paragraph = row.paragraph, c.index = row.index, c.document_id = row.document_id
MERGE (c)-[:PART_OF]->(d)
WITH c, row
WHERE row.embedding IS NOT NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
