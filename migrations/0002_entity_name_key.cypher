// 0002_entity_name_key: exact-name entity linking looks entities up by their resolution key
// (kag_neo4j.builder.names.name_key), e.g. a question's "Akinoshu Kenji's" -> 'akinoshu kenji'.

CREATE INDEX entity_name_key IF NOT EXISTS FOR (n:Entity) ON (n.name_key);
