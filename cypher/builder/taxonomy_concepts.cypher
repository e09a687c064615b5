// Concepts of a domain taxonomy (domain_kg nodes.json).
UNWIND $rows AS row
MERGE (c:Concept {id: row.id})
SET c.name = row.name, c.aliases = row.aliases, c.alias_text = row.alias_text, c.source_ids = row.source_ids,
    c.source = 'taxonomy', c.taxonomy = $taxonomy,
    c.description = CASE WHEN row.description = '' THEN c.description ELSE row.description END
WITH c, row
WHERE row.embedding IS NOT NULL AND (c.embedding IS NULL OR $replace_vectors)
CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding)
