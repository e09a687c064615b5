// What a change to documents touches, so that only the rules reading it are re-applied: the
// labels and property keys of the nodes the documents' chunks mention, and the types and keys
// of the stored (not derived) relationships around those nodes that the documents support
// (or that name no supporting documents: written outside the builder).
UNWIND $doc_ids AS doc_id
MATCH (:Document {id: doc_id})<-[:PART_OF]-(:Chunk)<-[:MENTIONED_IN]-(n)
WITH DISTINCT n
OPTIONAL MATCH (n)-[r]-()
WHERE r.derived_by IS NULL AND (r.doc_ids IS NULL OR any(d IN r.doc_ids WHERE d IN $doc_ids))
WITH n, collect(DISTINCT type(r)) AS types, collect(DISTINCT keys(r)) AS rel_keys
RETURN collect(DISTINCT labels(n)) AS labels, collect(DISTINCT keys(n)) + collect(rel_keys) AS keys,
       collect(DISTINCT types) AS types
