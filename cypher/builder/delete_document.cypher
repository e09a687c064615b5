MATCH (d:Document {id: $doc_id})
DETACH DELETE d
RETURN count(*) AS deleted
