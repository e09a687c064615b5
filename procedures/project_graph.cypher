// project_graph v1 — the in-memory GDS graph Personalized PageRank runs on: entities and chunks,
// joined by the mutual index (MENTIONED_IN) and entity-entity facts, all undirected.
MATCH (source) WHERE source:Entity OR source:Chunk
OPTIONAL MATCH (source)-[r]->(target)
WHERE (target:Entity OR target:Chunk) AND NOT type(r) IN ['NEXT', 'PART_OF']
WITH gds.graph.project($graph_name, source, target, {}, {undirectedRelationshipTypes: ['*']}) AS g
RETURN g.graphName AS graph, g.nodeCount AS nodes, g.relationshipCount AS relationships
