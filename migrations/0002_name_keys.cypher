// 0002_name_keys: lookups by resolution key (kag_neo4j.builder.names.name_key).
// * exact-name entity linking finds a question's mentions by Entity.name_key ("Akinoshu Kenji's" -> 'akinoshu kenji');
// * title anchors (procedures/project_graph.cypher v2, hybrid_retrieval_local.cypher) join an entity to the
//   chunks of the document whose Document.title_key is its name_key.

CREATE INDEX entity_name_key IF NOT EXISTS FOR (n:Entity) ON (n.name_key);
CREATE INDEX document_title_key IF NOT EXISTS FOR (d:Document) ON (d.title_key);
