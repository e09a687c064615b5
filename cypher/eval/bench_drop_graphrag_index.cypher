// bench_drop_graphrag_index v1 — the index neo4j-graphrag's Neo4jWriter creates for its own writes
// (on :__KGBuilder__ nodes); the benchmark's baseline loads leave nothing behind.
DROP INDEX `__entity__tmp_internal_id` IF EXISTS
