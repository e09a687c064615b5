// project_graph v3 — the in-memory GDS graph Personalized PageRank runs on: every entity and chunk,
// undirected, joined by
// * the mutual index (MENTIONED_IN), and
// * title anchors (TITLE_ANCHOR, cypher/builder/merge_title_anchors.cypher): an entity whose resolution key is a
//   document's title key is joined to that document's chunks - a mention of a titled thing elsewhere links
//   to its page, the hop compositional questions need ("the mother of X" -> X's page).
// Facts between entities are left out: each was read from a chunk that mentions both ends, so the walk
// already joins them through it; the shortcut lowered recall (benchmarks/results/retrieval-recall.md).
MATCH (source) WHERE source:Entity OR source:Chunk
OPTIONAL MATCH (source)-[:MENTIONED_IN|TITLE_ANCHOR]->(target:Chunk)
WITH gds.graph.project($graph_name, source, target, {}, {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
