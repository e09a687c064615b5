// project_graph v2 — the in-memory GDS graph Personalized PageRank runs on: every entity and chunk,
// undirected, joined by
// * the mutual index (MENTIONED_IN), and
// * title anchors: an entity whose resolution key is a document's title key (Document.title_key, written
//   by the builder) is joined to that document's chunks - a mention of a titled thing elsewhere links
//   to its page, the hop compositional questions need ("the mother of X" -> X's page).
// Facts between entities are left out: each was read from a chunk that mentions both ends, so the walk
// already joins them through it; the shortcut lowered recall (benchmarks/results/retrieval-recall.md).
CALL () {
  MATCH (source) WHERE source:Entity OR source:Chunk
  OPTIONAL MATCH (source)-[:MENTIONED_IN]->(target:Chunk)
  RETURN source, target
  UNION ALL
  MATCH (d:Document) WHERE d.title_key IS NOT NULL AND d.title_key <> ''
  MATCH (source:Entity {name_key: d.title_key})
  MATCH (target:Chunk)-[:PART_OF]->(d)
  WHERE NOT (source)-[:MENTIONED_IN]->(target)
  RETURN source, target
}
WITH gds.graph.project($graph_name, source, target, {}, {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
