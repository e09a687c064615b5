// Document ids that contain a string (to suggest the right id when one is not found).
MATCH (d:Document)
WHERE d.id CONTAINS $text OR d.title CONTAINS $text OR d.source CONTAINS $text
RETURN d.id AS id, d.title AS title
ORDER BY id
LIMIT 5
