// Sub-properties of literal properties (e.g. a confidence on an address).
UNWIND $rows AS row
MATCH (owner:SchemaProperty {key: row.owner_key})
CREATE (owner)-[:HAS_PROPERTY]->(p:SchemaProperty)
SET p = row
