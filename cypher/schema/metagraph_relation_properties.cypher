// Sub-properties of relations (edge properties).
UNWIND $rows AS row
MATCH (owner:SchemaRelation {key: row.owner_key})
CREATE (owner)-[:HAS_PROPERTY]->(p:SchemaProperty)
SET p = row
