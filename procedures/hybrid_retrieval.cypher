// hybrid_retrieval v6 — dense (vector index) + fulltext (BM25) + Personalized PageRank, fused by
// weighted Reciprocal Rank Fusion: score(chunk) = Σ_list weight[list] / ($rrf_k + rank_list(chunk)).
// PPR runs on the GDS projection $graph_name, seeded by the linked entities $seed_entity_ids, the entities
// whose resolution key is one of $seed_keys (exact links made here; hubs in more than $max_seed_chunks chunks
// left out when not null; every row returns their ids, in the keys' order, as linked_ids), with $seed_titles the
// first chunk of each document titled by one of $seed_keys (their ids on every row: titled_ids), and
// the top $dense_seeds dense chunks (or the chunks of element ids $seed_chunk_ids, when not null: the retry after a
// stale projection reads them first, see cypher/solver/dense_seeds.cypher); it is skipped when there
// are no seeds. Its chunks are the best $k_ppr chunks among the $ppr_pool highest-scoring nodes.
// Chunks of documents still loading (Document.status <> 'complete') are left out of every list;
// the indexes are asked for $candidate_factor times the candidates so that k_dense / k_fulltext remain.
// Parameters: $query_vector, $query_text (a Lucene query, already escaped), $seed_entity_ids, $seed_keys,
// $max_seed_chunks, $seed_titles, $seed_chunk_ids,
// $k_dense, $k_fulltext, $k_ppr, $candidate_factor, $dense_seeds, $damping, $max_iterations, $ppr_pool, $graph_name,
// $weights {dense, fulltext, ppr, <custom list>...}, $rrf_k, $k, $extra_lists.
// $extra_lists: custom ranked lists computed before this statement ([{name, ids: chunk ids best first}],
// see kag_neo4j.solver.retrieval.RankedList), fused by the same rules (kag_neo4j.solver.fusion): ids of
// missing chunks and of chunks of documents still loading are left out before ranking, a chunk listed
// twice counts once, at its first rank (its later copy still takes up a rank).
// Paste into Neo4j Browser with :param for each of them.
CALL () {
  CALL db.index.vector.queryNodes('chunk_embedding', $k_dense * $candidate_factor, $query_vector) YIELD node, score
  WHERE EXISTS { (node)-[:PART_OF]->(d:Document) WHERE coalesce(d.status, 'complete') = 'complete' }
  WITH node, score ORDER BY score DESC LIMIT $k_dense
  RETURN collect(node) AS dense
}
CALL () {
  WITH $query_text AS lucene
  WHERE lucene <> '' AND $weights.fulltext > 0
  CALL db.index.fulltext.queryNodes('chunk_fulltext', lucene, {limit: $k_fulltext * $candidate_factor}) YIELD node, score
  WHERE EXISTS { (node)-[:PART_OF]->(d:Document) WHERE coalesce(d.status, 'complete') = 'complete' }
  WITH node, score ORDER BY score DESC LIMIT $k_fulltext
  RETURN collect(node) AS sparse
}
CALL () {  // the exact links of the question's mentions: entities whose resolution key is one of $seed_keys
  // (in their order, then by id), but hubs mentioned in more than $max_seed_chunks chunks (not null)
  UNWIND range(0, size(coalesce($seed_keys, [])) - 1) AS position
  MATCH (linked:Entity {name_key: $seed_keys[position]})
  WHERE $max_seed_chunks IS NULL OR COUNT { (linked)-[:MENTIONED_IN]->(:Chunk) } <= $max_seed_chunks
  WITH linked ORDER BY position, linked.id
  RETURN collect(DISTINCT linked) AS linked
}
CALL () {  // the documents the mentions name ($seed_titles): the first chunk of each document whose title key
  // is one of $seed_keys (the passage a title anchor leads to, even when no entity of that name was
  // extracted), but keys that title more than $max_seed_chunks documents (not null)
  UNWIND CASE WHEN $seed_titles THEN coalesce($seed_keys, []) ELSE [] END AS key
  MATCH (d:Document {title_key: key}) WHERE key <> '' AND coalesce(d.status, 'complete') = 'complete'
  WITH key, collect(d) AS documents WHERE $max_seed_chunks IS NULL OR size(documents) <= $max_seed_chunks
  UNWIND documents AS d
  CALL (d) {
    MATCH (first:Chunk)-[:PART_OF]->(d)
    RETURN first ORDER BY first.index, first.id LIMIT 1
  }
  WITH DISTINCT first ORDER BY first.id
  RETURN collect(first) AS titled
}
CALL (dense, linked, titled) {
  OPTIONAL MATCH (e:Entity) WHERE e.id IN $seed_entity_ids
  WITH dense, linked, titled, collect(e) AS entities
  OPTIONAL MATCH (c:Chunk) WHERE elementId(c) IN coalesce($seed_chunk_ids, [])
  WITH dense, linked, titled, entities + [entity IN linked WHERE NOT entity IN entities] AS entities,
       collect(c) AS chunks
  WITH entities + titled + [chunk IN CASE WHEN $seed_chunk_ids IS NULL THEN dense[0..$dense_seeds] ELSE chunks END
                            WHERE NOT chunk IN titled] AS seeds
  WHERE size(seeds) > 0 AND $weights.ppr > 0
  CALL gds.pageRank.stream($graph_name, {
    sourceNodes: seeds, dampingFactor: $damping, maxIterations: $max_iterations, concurrency: 2
  }) YIELD nodeId, score
  WITH nodeId, score WHERE score > 0
  ORDER BY score DESC LIMIT $ppr_pool  // only the best nodes are looked up (asNode is the cost)
  WITH gds.util.asNode(nodeId) AS node, score
  WHERE node:Chunk
    AND EXISTS { (node)-[:PART_OF]->(d:Document) WHERE coalesce(d.status, 'complete') = 'complete' }
  WITH node, score ORDER BY score DESC, node.id ASC LIMIT $k_ppr
  RETURN collect(node) AS ppr
}
CALL () {
  UNWIND coalesce($extra_lists, []) AS extra
  CALL (extra) {
    UNWIND range(0, size(extra.ids) - 1) AS position
    MATCH (node:Chunk {id: extra.ids[position]})
    WHERE EXISTS { (node)-[:PART_OF]->(d:Document) WHERE coalesce(d.status, 'complete') = 'complete' }
    WITH node, position ORDER BY position
    WITH collect(node) AS found
    // a later copy of a chunk keeps its place in the ranking but counts for nothing (null)
    RETURN [i IN range(0, size(found) - 1) | CASE WHEN found[i] IN found[0..i] THEN null ELSE found[i] END] AS nodes
  }
  RETURN collect([extra.name, nodes]) AS extras
}
UNWIND [['dense', dense], ['fulltext', sparse], ['ppr', ppr]] + extras AS ranked
WITH linked, titled, ranked[0] AS list, ranked[1] AS nodes
WHERE coalesce($weights[list], 0.0) > 0
UNWIND range(0, size(nodes) - 1) AS position
WITH linked, titled, nodes[position] AS chunk, list, position + 1 AS rank
WHERE chunk IS NOT NULL
WITH linked, titled, chunk, sum($weights[list] / ($rrf_k + rank)) AS score, collect({list: list, rank: rank}) AS ranks
ORDER BY score DESC, chunk.id ASC
LIMIT $k
MATCH (chunk)-[:PART_OF]->(document:Document)
RETURN chunk.id AS chunk_id, document.id AS document_id, document.title AS title, chunk.text AS text,
       score, ranks, [entity IN linked | entity.id] AS linked_ids, [first IN titled | first.id] AS titled_ids
ORDER BY score DESC, chunk_id ASC
