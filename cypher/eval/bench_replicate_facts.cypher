// bench_replicate_facts v1 — entity-entity facts between the replicas of $replica (as RELATED edges;
// PPR's projection reads every type alike).
MATCH (a:Entity)-[r]->(b:Entity) WHERE a.replica_of IS NULL AND b.replica_of IS NULL
CALL (a, r, b) {
  MATCH (ac:Entity {id: a.id + '~r' + toString($replica)})
  MATCH (bc:Entity {id: b.id + '~r' + toString($replica)})
  CREATE (ac)-[:RELATED {predicate: coalesce(r.predicate, type(r))}]->(bc)
} IN TRANSACTIONS OF 1000 ROWS
