// Entity-resolution candidates: nearest stored entities by name vector (cosine score = (1 + cos) / 2).
UNWIND $rows AS row
CALL db.index.vector.queryNodes('entity_embedding', $k, row.vector) YIELD node, score
WITH row, node, score
WHERE score >= $min_score AND node.family = row.family
RETURN row.id AS id, node.id AS match, node.name AS name, node.name_key AS key, node.family AS family,
       node.semantic_type AS semantic_type,
       2 * score - 1 AS cosine
