// server_info v2 — versions recorded with every evaluation run, and the store id that keys its per-question cache.
CALL dbms.components() YIELD name, versions, edition
WITH name, versions[0] AS version, edition WHERE name = 'Neo4j Kernel'
CALL db.info() YIELD id
RETURN version, edition, gds.version() AS gds, id AS store_id
