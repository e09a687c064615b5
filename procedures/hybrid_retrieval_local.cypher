// hybrid_retrieval_local v7 — hybrid_retrieval (v6) with its Personalized PageRank computed in plain Cypher
// over the seeds' neighbourhood instead of by GDS over the whole projection: the ranking backend 'cypher'
// (kag_neo4j.solver.retrieval.RetrievalConfig.ppr_backend), and the only one on a Neo4j without GDS.
// Everything but the PPR block is hybrid_retrieval.cypher's text (a unit test keeps the two in step).
// Parameters: those of hybrid_retrieval.cypher but $graph_name, $max_iterations and $ppr_pool, plus
// $ppr_hops (0-6), $ppr_frontier (nodes kept at each hop), $ppr_last_frontier (kept at the hop before the last
// push) and $ppr_frontier_per_degree (how they are chosen).
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
  // local Personalized PageRank in plain Cypher (docs/scaling.md): the reset mass (1 / |seeds| on
  // each seed) is pushed along the relationships PageRank's projection holds (procedures/project_graph.cypher:
  // MENTIONED_IN and TITLE_ANCHOR; anchors kept as relationships: 12% less time than looked up at each hop),
  // damped by $damping at each hop, for $ppr_hops hops (at most 6); each hop keeps the $ppr_frontier nodes with the most
  // mass or, with $ppr_frontier_per_degree, the most mass per relationship (what a push gives each neighbour; the
  // order of push-style local PageRank, which pushes the nodes whose mass / degree is largest). The hop before
  // the last push keeps $ppr_last_frontier nodes: the ranking depends on that frontier most (wider there, top-10
  // agreement with exact PageRank rose from 0.866 to 0.916 on 2Wiki; wider at the first two hops, not at all).
  // A chunk's score is the mass that visits it (the truncated power series of PPR, without its constant factor).
  // Only chunks are ranked, so the last push skips the frontier's chunks (their mass would reach entities only).
  // The hops are written out: a loop (reduce over COLLECT subqueries, which allow no aggregation inside
  // a list expression) gave the same lists 20-25% slower (benchmarks/results/latency-figures.md).
  UNWIND seeds AS seed
  WITH seed, 1.0 / size(seeds) AS mass
  WITH collect({node: seed, mass: mass}) AS frontier0
  CALL (frontier0) {
    UNWIND CASE WHEN $ppr_hops > 0 THEN frontier0 ELSE [] END AS visit
    WITH visit.node AS node, visit.mass AS mass
    WHERE $ppr_hops > 1 OR node:Entity  // the last push only moves mass onto chunks
    // the relationships of the projection (procedures/project_graph.cypher v3): mentions and title anchors
    MATCH (node)-[:MENTIONED_IN|TITLE_ANCHOR]-(next) WHERE next:Entity OR next:Chunk
    WITH node, mass, collect(next) AS nexts  // one entry per relationship: the degree GDS divides by
    UNWIND nexts AS next
    WITH next, sum($damping * mass / size(nexts)) AS mass
    ORDER BY CASE WHEN $ppr_frontier_per_degree THEN mass / (COUNT { (next)-[:MENTIONED_IN]-() } + 1) ELSE mass END DESC,
             CASE WHEN $ppr_frontier_per_degree THEN next.id END ASC
    LIMIT CASE WHEN $ppr_hops = 2 THEN $ppr_last_frontier ELSE $ppr_frontier END
    RETURN collect({node: next, mass: mass}) AS frontier1
  }
  CALL (frontier1) {
    UNWIND CASE WHEN $ppr_hops > 1 THEN frontier1 ELSE [] END AS visit
    WITH visit.node AS node, visit.mass AS mass
    WHERE $ppr_hops > 2 OR node:Entity  // the last push only moves mass onto chunks
    // the relationships of the projection (procedures/project_graph.cypher v3): mentions and title anchors
    MATCH (node)-[:MENTIONED_IN|TITLE_ANCHOR]-(next) WHERE next:Entity OR next:Chunk
    WITH node, mass, collect(next) AS nexts  // one entry per relationship: the degree GDS divides by
    UNWIND nexts AS next
    WITH next, sum($damping * mass / size(nexts)) AS mass
    ORDER BY CASE WHEN $ppr_frontier_per_degree THEN mass / (COUNT { (next)-[:MENTIONED_IN]-() } + 1) ELSE mass END DESC,
             CASE WHEN $ppr_frontier_per_degree THEN next.id END ASC
    LIMIT CASE WHEN $ppr_hops = 3 THEN $ppr_last_frontier ELSE $ppr_frontier END
    RETURN collect({node: next, mass: mass}) AS frontier2
  }
  CALL (frontier2) {
    UNWIND CASE WHEN $ppr_hops > 2 THEN frontier2 ELSE [] END AS visit
    WITH visit.node AS node, visit.mass AS mass
    WHERE $ppr_hops > 3 OR node:Entity  // the last push only moves mass onto chunks
    // the relationships of the projection (procedures/project_graph.cypher v3): mentions and title anchors
    MATCH (node)-[:MENTIONED_IN|TITLE_ANCHOR]-(next) WHERE next:Entity OR next:Chunk
    WITH node, mass, collect(next) AS nexts  // one entry per relationship: the degree GDS divides by
    UNWIND nexts AS next
    WITH next, sum($damping * mass / size(nexts)) AS mass
    ORDER BY CASE WHEN $ppr_frontier_per_degree THEN mass / (COUNT { (next)-[:MENTIONED_IN]-() } + 1) ELSE mass END DESC,
             CASE WHEN $ppr_frontier_per_degree THEN next.id END ASC
    LIMIT CASE WHEN $ppr_hops = 4 THEN $ppr_last_frontier ELSE $ppr_frontier END
    RETURN collect({node: next, mass: mass}) AS frontier3
  }
  CALL (frontier3) {
    UNWIND CASE WHEN $ppr_hops > 3 THEN frontier3 ELSE [] END AS visit
    WITH visit.node AS node, visit.mass AS mass
    WHERE $ppr_hops > 4 OR node:Entity  // the last push only moves mass onto chunks
    // the relationships of the projection (procedures/project_graph.cypher v3): mentions and title anchors
    MATCH (node)-[:MENTIONED_IN|TITLE_ANCHOR]-(next) WHERE next:Entity OR next:Chunk
    WITH node, mass, collect(next) AS nexts  // one entry per relationship: the degree GDS divides by
    UNWIND nexts AS next
    WITH next, sum($damping * mass / size(nexts)) AS mass
    ORDER BY CASE WHEN $ppr_frontier_per_degree THEN mass / (COUNT { (next)-[:MENTIONED_IN]-() } + 1) ELSE mass END DESC,
             CASE WHEN $ppr_frontier_per_degree THEN next.id END ASC
    LIMIT CASE WHEN $ppr_hops = 5 THEN $ppr_last_frontier ELSE $ppr_frontier END
    RETURN collect({node: next, mass: mass}) AS frontier4
  }
  CALL (frontier4) {
    UNWIND CASE WHEN $ppr_hops > 4 THEN frontier4 ELSE [] END AS visit
    WITH visit.node AS node, visit.mass AS mass
    WHERE $ppr_hops > 5 OR node:Entity  // the last push only moves mass onto chunks
    // the relationships of the projection (procedures/project_graph.cypher v3): mentions and title anchors
    MATCH (node)-[:MENTIONED_IN|TITLE_ANCHOR]-(next) WHERE next:Entity OR next:Chunk
    WITH node, mass, collect(next) AS nexts  // one entry per relationship: the degree GDS divides by
    UNWIND nexts AS next
    WITH next, sum($damping * mass / size(nexts)) AS mass
    ORDER BY CASE WHEN $ppr_frontier_per_degree THEN mass / (COUNT { (next)-[:MENTIONED_IN]-() } + 1) ELSE mass END DESC,
             CASE WHEN $ppr_frontier_per_degree THEN next.id END ASC
    LIMIT CASE WHEN $ppr_hops = 6 THEN $ppr_last_frontier ELSE $ppr_frontier END
    RETURN collect({node: next, mass: mass}) AS frontier5
  }
  CALL (frontier5) {
    UNWIND CASE WHEN $ppr_hops > 5 THEN frontier5 ELSE [] END AS visit
    WITH visit.node AS node, visit.mass AS mass
    WHERE $ppr_hops > 6 OR node:Entity  // the last push only moves mass onto chunks
    // the relationships of the projection (procedures/project_graph.cypher v3): mentions and title anchors
    MATCH (node)-[:MENTIONED_IN|TITLE_ANCHOR]-(next) WHERE next:Entity OR next:Chunk
    WITH node, mass, collect(next) AS nexts  // one entry per relationship: the degree GDS divides by
    UNWIND nexts AS next
    WITH next, sum($damping * mass / size(nexts)) AS mass
    ORDER BY CASE WHEN $ppr_frontier_per_degree THEN mass / (COUNT { (next)-[:MENTIONED_IN]-() } + 1) ELSE mass END DESC,
             CASE WHEN $ppr_frontier_per_degree THEN next.id END ASC
    LIMIT $ppr_frontier  // the sixth push is always the last: no hop after it to widen for
    RETURN collect({node: next, mass: mass}) AS frontier6
  }
  UNWIND frontier0 + frontier1 + frontier2 + frontier3 + frontier4 + frontier5 + frontier6 AS visit
  WITH visit.node AS node, sum(visit.mass) AS score
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
