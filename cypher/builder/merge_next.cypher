// Reading order: (:Chunk)-[:NEXT]->(:Chunk) between consecutive chunks of a document.
UNWIND $rows AS row
MATCH (a:Chunk {id: row.source})
MATCH (b:Chunk {id: row.target})
MERGE (a)-[:NEXT]->(b)
