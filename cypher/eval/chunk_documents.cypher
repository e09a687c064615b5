// chunk_documents v1 — the document of each chunk id in $chunk_ids (for retrievers that return
// chunks only, such as neo4j-graphrag's VectorRetriever and HybridRetriever).
UNWIND $chunk_ids AS id
MATCH (chunk:Chunk {id: id})-[:PART_OF]->(document:Document)
RETURN chunk.id AS chunk_id, document.id AS document_id
