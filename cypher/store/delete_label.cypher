// Every node of one label of this knowledge base but the test marker, in batches.
MATCH (n:`{{ label }}`) WHERE NOT n:KagTestDatabase
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
