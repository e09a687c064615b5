// (child)-[:INHERITS]->(parent) for every `Child -> Parent:` declaration.
UNWIND $rows AS row
MATCH (child:SchemaType {key: row.key})
MATCH (parent:SchemaType {key: row.parent_key})
CREATE (child)-[:INHERITS]->(parent)
