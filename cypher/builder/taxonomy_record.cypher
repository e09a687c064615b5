// Remember which taxonomy was loaded (same transaction as its concepts); a concept table also
// keeps the id of its file's document ($document_id, null for other taxonomies).
MERGE (m:KagMeta {key: $key})
SET m.checksum = $checksum, m.concepts = $concepts, m.edges = $edges, m.loaded_at = datetime(),
    m.document_id = $document_id
