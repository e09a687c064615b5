// Document ids that contain a string (to suggest the right id when one is not found), and the
// ids of concept tables (loaded as taxonomies) whose path contains it.
CALL {
  MATCH (d:Document)
  WHERE d.id CONTAINS $text OR d.title CONTAINS $text OR d.source CONTAINS $text
  RETURN d.id AS id, d.title AS title
  UNION
  MATCH (m:KagMeta)
  WHERE m.key STARTS WITH 'taxonomy:table:' AND m.document_id IS NOT NULL
    AND (m.document_id CONTAINS $text OR m.key CONTAINS $text)
  RETURN m.document_id AS id, substring(m.key, size('taxonomy:table:')) AS title
}
RETURN id, title
ORDER BY id
LIMIT 5
