// Surviving entities get the description, semantic type and extracted properties of the documents
// that remain (first document wins, as when they were written); a property key only the deleted
// document gave is removed (row.properties has no value for it).
UNWIND $rows AS row
MATCH (n:Entity {id: row.id})
SET n.description = row.description, n.semantic_type = row.semantic_type
WITH n, row
CALL (n, row) {
  UNWIND row.keys AS key
  SET n[key] = row.properties[key]
}
