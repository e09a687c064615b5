// corpus_inventory v2 — is the evaluation corpus in this database? Counts every document, the
// corpus documents ($document_ids) in it (known) and those completely written (present; an
// interrupted load leaves the others incomplete), their chunks and embedded chunks, and returns
// the marker an evaluation load leaves ($marker_key).
CALL () {
  MATCH (d:Document)
  RETURN count(d) AS documents
}
CALL () {
  UNWIND $document_ids AS id
  MATCH (d:Document {id: id})
  RETURN count(d) AS known, count(CASE WHEN coalesce(d.status, 'complete') = 'complete' THEN d END) AS present
}
CALL () {
  UNWIND $document_ids AS id
  MATCH (:Document {id: id})<-[:PART_OF]-(c:Chunk)
  RETURN count(c) AS chunks, count(c.embedding) AS embedded
}
OPTIONAL MATCH (marker:KagMeta {key: $marker_key})
RETURN documents, known, present, chunks, embedded, properties(marker) AS marker
