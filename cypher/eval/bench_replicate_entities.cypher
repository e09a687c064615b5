// bench_replicate_entities v1 — replica $replica of every original entity (see bench_replicate_documents).
MATCH (e:Entity) WHERE e.replica_of IS NULL
CALL (e) {
  CREATE (:Entity {id: e.id + '~r' + toString($replica), name: e.name, alias_text: e.alias_text,
                   description: e.description, embedding: e.embedding, replica_of: e.id})
} IN TRANSACTIONS OF 1000 ROWS
