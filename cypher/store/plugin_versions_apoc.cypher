// plugin_versions_apoc v1 — plugin_versions for a local server started without GDS (`server start --no-gds`).
CALL dbms.components() YIELD name, versions
WITH versions[0] AS neo4j WHERE name = 'Neo4j Kernel'
RETURN neo4j, apoc.version() AS apoc
