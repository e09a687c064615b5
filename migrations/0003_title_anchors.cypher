// 0003_title_anchors: title anchors become relationships, (:Entity)-[:TITLE_ANCHOR]->(:Chunk), so that
// PageRank (procedures/project_graph.cypher v3, hybrid_retrieval_local.cypher v6) follows one
// relationship type instead of looking titles up at every step. An entity whose resolution key is a
// document's title key titles that document's chunks, but those that mention it. From here on the
// builder keeps them (cypher/builder/merge_title_anchors.cypher); this makes those of the graph
// written before, and tells readers (the GDS projection) that the graph changed.

MATCH (d:Document) WHERE d.title_key IS NOT NULL AND d.title_key <> ''
MATCH (e:Entity {name_key: d.title_key})
MATCH (c:Chunk)-[:PART_OF]->(d) WHERE NOT (e)-[:MENTIONED_IN]->(c)
MERGE (e)-[:TITLE_ANCHOR]->(c);

MATCH (m:KagMeta {key: 'graph'})
SET m.version = coalesce(m.version, 0) + 1, m.updated_at = datetime(), m.reason = 'migration 0003_title_anchors';
