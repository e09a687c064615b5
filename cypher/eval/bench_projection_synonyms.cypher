// bench_projection_synonyms — recall ablation only (benchmarks/recall_sweep.py): project_graph v2 plus
// the synonym edges benchmarks/synonym_edges.py wrote between entities of similar names (SYNONYM between entities).
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
  UNION ALL
  MATCH (source:Entity)-[:SYNONYM]->(target:Entity)
  RETURN source, target
}
WITH gds.graph.project($graph_name, source, target, {}, {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
