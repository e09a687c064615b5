// Remove a document's provenance from the facts around the nodes (template variable kind: Entity
// or Event) its chunks mention; a fact whose last supporting chunk was in the document is deleted,
// the others keep their other chunks.
UNWIND $node_ids AS id
MATCH (n:`{{ kind }}` {id: id})-[r]-()
WHERE r.doc_ids IS NOT NULL AND $doc_id IN r.doc_ids
WITH DISTINCT r
SET r.chunk_ids = [x IN r.chunk_ids WHERE NOT x IN $chunk_ids],
    r.doc_ids = [x IN r.doc_ids WHERE x <> $doc_id]
WITH r, size(r.chunk_ids) = 0 AS gone
CALL (r, gone) {
  WITH r WHERE gone
  DELETE r
}
RETURN count(CASE WHEN gone THEN 1 END) AS deleted, count(CASE WHEN NOT gone THEN 1 END) AS updated
