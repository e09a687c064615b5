// The element ids (a replaced chunk is a new node) of the $dense_seeds best dense chunks (of complete documents), exactly as
// procedures/hybrid_retrieval.cypher picks its PPR seeds; read *before* the projection is chosen,
// so that every seed is in it (the builder bumps the graph version in the transaction that writes).
CALL db.index.vector.queryNodes('chunk_embedding', $k_dense * $candidate_factor, $query_vector) YIELD node, score
WHERE EXISTS { (node)-[:PART_OF]->(d:Document) WHERE coalesce(d.status, 'complete') = 'complete' }
WITH node, score ORDER BY score DESC LIMIT $dense_seeds
RETURN elementId(node) AS id
