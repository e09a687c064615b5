// The stored state of documents about to be loaded: sha256 and load status ('loading' | 'complete').
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.sha256 AS sha256, d.status AS status
