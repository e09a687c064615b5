// bench_synonym_edges v1 — recall ablation only (benchmarks/synonym_edges.py): for each entity id of
// $ids, its $k nearest entities by name vector (the entity_embedding index) with cosine >= $min_cosine
// are joined by (:Entity)-[:SYNONYM {cosine}]->(:Entity) — the concept graph's type, here between
// entities and marked by its cosine — once per pair (from the smaller id).
UNWIND $ids AS id
MATCH (entity:Entity {id: id}) WHERE entity.embedding IS NOT NULL
CALL db.index.vector.queryNodes('entity_embedding', $k + 1, entity.embedding) YIELD node, score
WITH entity, node, 2 * score - 1 AS cosine
WHERE node <> entity AND cosine >= $min_cosine AND entity.id < node.id
MERGE (entity)-[edge:SYNONYM]->(node)
SET edge.cosine = cosine
RETURN count(edge) AS edges
