// Literal-valued properties declared on a type.
UNWIND $rows AS row
MATCH (owner:SchemaType {key: row.owner_key})
CREATE (owner)-[:HAS_PROPERTY]->(p:SchemaProperty)
SET p = row
