// capabilities v1 — whether this Neo4j offers the GDS procedures kag-neo4j calls (read once per
// connection, kag_neo4j.store.database.Database.capabilities). A server without them (Aura Free,
// a plain Neo4j) answers false, and Personalized PageRank runs in plain Cypher instead.
SHOW PROCEDURES YIELD name
WHERE name IN ['gds.graph.project', 'gds.graph.list', 'gds.graph.drop', 'gds.pageRank.stream']
RETURN count(name) = 4 AS gds
