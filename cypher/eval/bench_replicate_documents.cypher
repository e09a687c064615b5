// bench_replicate_documents v1 — synthetic scale-up for the latency benchmark (never used by eval):
// replica $replica of every original document and its chunks (ids suffixed '~r<replica>'), chunk
// vectors moved by uniform noise of width $noise so the vector index holds no exact duplicates.
MATCH (d:Document) WHERE d.replica_of IS NULL
CALL (d) {
  CREATE (copy:Document {id: d.id + '~r' + toString($replica), title: d.title, title_key: d.title_key, status: 'complete',
                         replica_of: d.id})
  WITH d, copy
  MATCH (c:Chunk)-[:PART_OF]->(d)
  CREATE (cc:Chunk {id: c.id + '~r' + toString($replica), text: c.text, title: c.title, replica_of: c.id,
                    embedding: [x IN c.embedding | x + (rand() - 0.5) * $noise]})-[:PART_OF]->(copy)
} IN TRANSACTIONS OF 200 ROWS
