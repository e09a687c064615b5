// is this database marked as disposable by kag-neo4j's tests, and does it hold anything else?
OPTIONAL MATCH (m:KagTestDatabase)
WITH count(m) AS markers
OPTIONAL MATCH (n) WHERE NOT n:KagTestDatabase
WITH markers, n LIMIT 1
RETURN markers, count(n) AS other_nodes
