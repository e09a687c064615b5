// Concepts made by alignment (semantic types); a taxonomy concept with the same id is left as it is.
UNWIND $rows AS row
MERGE (c:Concept {id: row.id})
ON CREATE SET c.name = row.name, c.source = 'extraction'
WITH c, row
WHERE row.embedding IS NOT NULL AND c.embedding IS NULL
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
