// A custom ranked list (examples/custom_ranked_list.py): the chunks of the documents whose title the
// question spells out (case-insensitive), longer titles first. Parameters: $question, $k.
MATCH (chunk:Chunk)-[:PART_OF]->(document:Document)
WHERE document.title IS NOT NULL AND size(trim(document.title)) >= 3
  AND toLower($question) CONTAINS toLower(document.title)
RETURN chunk.id AS chunk_id
ORDER BY size(document.title) DESC, chunk_id ASC
LIMIT $k
