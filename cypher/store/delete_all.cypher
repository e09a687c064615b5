// every node but the test marker (see kag_neo4j/store/reset.py)
MATCH (n) WHERE NOT n:KagTestDatabase
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS
