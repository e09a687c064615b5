// bench_drop_replicas v1 — remove the synthetic replicas the latency benchmark made.
MATCH (n) WHERE n.replica_of IS NOT NULL
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
