// A concept table loaded as a taxonomy: by the id of its file's document, or by its path as it
// was loaded. The concepts it wrote carry its taxonomy name (the key without 'taxonomy:').
MATCH (m:KagMeta)
WHERE m.key STARTS WITH 'taxonomy:table:' AND (m.document_id = $doc_id OR m.key = 'taxonomy:table:' + $doc_id)
RETURN m.key AS key, substring(m.key, size('taxonomy:')) AS taxonomy, m.document_id AS document_id
ORDER BY key
LIMIT 1
