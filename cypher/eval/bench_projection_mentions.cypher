// bench_projection_mentions — recall ablation only (benchmarks/recall_sweep.py): project_graph v2
// without its title anchors: entities and chunks joined by the mutual index alone.
MATCH (source) WHERE source:Entity OR source:Chunk
OPTIONAL MATCH (source)-[:MENTIONED_IN]->(target:Chunk)
WITH gds.graph.project($graph_name, source, target, {}, {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
