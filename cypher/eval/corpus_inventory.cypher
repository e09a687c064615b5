// corpus_inventory v1 — is the evaluation corpus in this database? Counts every document, the
// corpus documents present and completely written ($document_ids), their chunks and embedded
// chunks, and returns the marker an evaluation load leaves ($marker_key).
CALL () {
  MATCH (d:Document)
  RETURN count(d) AS documents
}
CALL () {
  UNWIND $document_ids AS id
  MATCH (d:Document {id: id})
  WHERE coalesce(d.status, 'complete') = 'complete'
  RETURN count(d) AS present
}
CALL () {
  UNWIND $document_ids AS id
  MATCH (:Document {id: id})<-[:PART_OF]-(c:Chunk)
  RETURN count(c) AS chunks, count(c.embedding) AS embedded
}
OPTIONAL MATCH (marker:KagMeta {key: $marker_key})
RETURN documents, present, chunks, embedded, properties(marker) AS marker
