// bench_projection_v1 — recall ablation only (benchmarks/recall_sweep.py): project_graph v1, the
// projection before the recall work: entities and chunks joined by the mutual index and by every
// entity-entity fact, undirected, no title anchors.
MATCH (source) WHERE source:Entity OR source:Chunk
OPTIONAL MATCH (source)-[r]->(target)
WHERE (target:Entity OR target:Chunk) AND NOT type(r) IN ['NEXT', 'PART_OF']
WITH gds.graph.project($graph_name, source, target, {}, {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
