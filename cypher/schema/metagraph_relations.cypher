// Class-valued predicates (edges): (source type)-[:HAS_RELATION]->(relation)-[:RANGE]->(target type).
UNWIND $rows AS row
MATCH (owner:SchemaType {key: row.owner_key})
MATCH (target:SchemaType {key: row.target_key})
CREATE (owner)-[:HAS_RELATION]->(r:SchemaRelation)-[:RANGE]->(target)
SET r = row
