// bench_projection_no_values — recall ablation only (benchmarks/recall_sweep.py): project_graph v1
// without literal entities (family 'value': dates, amounts), which join unrelated passages.
MATCH (source) WHERE (source:Entity AND source.family <> 'value') OR source:Chunk
OPTIONAL MATCH (source)-[r]->(target)
WHERE ((target:Entity AND target.family <> 'value') OR target:Chunk) AND NOT type(r) IN ['NEXT', 'PART_OF']
WITH gds.graph.project($graph_name, source, target, {}, {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
