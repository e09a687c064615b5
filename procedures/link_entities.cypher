// link_entities v1 — entity linking: fulltext on names/aliases/descriptions and vector similarity on
// entity embeddings, fused by RRF; optionally restricted to a type, given as a value ($type), so no
// label is ever built from it. Returns at most $k entities for the mention $mention. An empty
// $mention_query (a mention of punctuation only) skips the fulltext call, which cannot parse it.
CALL () {
  WITH $mention_query AS lucene
  WHERE lucene <> ''
  CALL db.index.fulltext.queryNodes('entity_fulltext', lucene, {limit: $k_candidates}) YIELD node, score
  WHERE $type IS NULL OR $type IN labels(node)
  RETURN collect(node) AS by_text
}
CALL () {
  CALL db.index.vector.queryNodes('entity_embedding', $k_candidates, $mention_vector) YIELD node, score
  WHERE ($type IS NULL OR $type IN labels(node)) AND score >= $min_similarity
  RETURN collect(node) AS by_vector
}
UNWIND [['text', by_text], ['vector', by_vector]] AS ranked
WITH ranked[0] AS list, ranked[1] AS nodes
UNWIND range(0, size(nodes) - 1) AS position
WITH nodes[position] AS entity, list, position + 1 AS rank
WITH entity, sum(1.0 / ($rrf_k + rank)) + CASE WHEN toLower(entity.name) = toLower($mention) THEN 1.0 ELSE 0.0 END AS score,
     collect({list: list, rank: rank}) AS ranks
ORDER BY score DESC, entity.id ASC
LIMIT $k
RETURN entity.id AS id, entity.name AS name, [label IN labels(entity) WHERE label <> 'Entity'] AS types,
       entity.description AS description, coalesce(entity.aliases, []) AS aliases, score, ranks
