// bench_replicate_mentions v1 — the mutual index (MENTIONED_IN) between the replicas of $replica.
MATCH (e:Entity)-[m:MENTIONED_IN]->(c:Chunk) WHERE e.replica_of IS NULL AND c.replica_of IS NULL
CALL (e, m, c) {
  MATCH (ec:Entity {id: e.id + '~r' + toString($replica)})
  MATCH (cc:Chunk {id: c.id + '~r' + toString($replica)})
  CREATE (ec)-[:MENTIONED_IN {count: m.count}]->(cc)
} IN TRANSACTIONS OF 1000 ROWS
