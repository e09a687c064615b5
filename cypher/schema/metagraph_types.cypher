// One SchemaType node per declared type, linked from its namespace.
MATCH (ns:SchemaNamespace {name: $namespace})
UNWIND $rows AS row
CREATE (t:SchemaType)
SET t = row
CREATE (ns)-[:DECLARES]->(t)
