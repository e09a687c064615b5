// plugin_versions v1 — the local launcher's check that Neo4j, GDS and APOC answer.
CALL dbms.components() YIELD name, versions
WITH versions[0] AS neo4j WHERE name = 'Neo4j Kernel'
RETURN neo4j, gds.version() AS gds, apoc.version() AS apoc
