// Every index name as stored, with knowledge-base prefixes (kag_neo4j.store.kb_admin).
SHOW INDEXES YIELD name
RETURN collect(name) AS names
