MERGE (m:KagTestDatabase {key: 'kag-neo4j'})
ON CREATE SET m.created_at = datetime(), m.reason = $reason
RETURN m.key AS key
