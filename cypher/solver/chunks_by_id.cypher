// Chunks by id, with their document (for citations of graph facts); chunks of documents still
// loading (status <> 'complete') are left out.
UNWIND $chunk_ids AS chunk_id
MATCH (chunk:Chunk {id: chunk_id})-[:PART_OF]->(document:Document)
WHERE coalesce(document.status, 'complete') = 'complete'
RETURN chunk.id AS chunk_id, document.id AS document_id, document.title AS title, chunk.text AS text
