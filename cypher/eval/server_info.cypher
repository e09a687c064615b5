// server_info v1 — versions recorded with every evaluation run.
CALL dbms.components() YIELD name, versions, edition
WITH name, versions[0] AS version, edition WHERE name = 'Neo4j Kernel'
RETURN version, edition, gds.version() AS gds
