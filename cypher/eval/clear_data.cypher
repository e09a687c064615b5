// clear_data v1 — empty the knowledge base for `kag-neo4j eval --replace`: every node except the
// migration records, in batches. Constraints and indexes stay; GDS graphs are dropped separately.
MATCH (n)
WHERE NOT n:KagMigration AND NOT n:KagMigrationLock AND NOT n:KagTestDatabase
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
