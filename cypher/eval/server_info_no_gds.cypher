// server_info_no_gds v2 — eval/server_info for a Neo4j without GDS (its runs record gds: null).
CALL dbms.components() YIELD name, versions, edition
WITH name, versions[0] AS version, edition WHERE name = 'Neo4j Kernel'
CALL db.info() YIELD id
RETURN version, edition, id AS store_id
