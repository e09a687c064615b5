// Injection benchmark: the labels, relationship types and property keys in use (on any node or
// relationship), compared before and after a hostile load. Scans the whole graph: small graphs only.
CALL () {
  CALL db.labels() YIELD label
  RETURN collect(label) AS labels
}
CALL () {
  CALL db.relationshipTypes() YIELD relationshipType
  RETURN collect(relationshipType) AS types
}
CALL () {
  OPTIONAL MATCH (n)
  UNWIND CASE WHEN n IS NULL THEN [] ELSE keys(n) END AS key
  RETURN collect(DISTINCT key) AS node_keys
}
CALL () {
  OPTIONAL MATCH ()-[r]->()
  UNWIND CASE WHEN r IS NULL THEN [] ELSE keys(r) END AS key
  RETURN collect(DISTINCT key) AS edge_keys
}
RETURN labels, types, node_keys + [key IN edge_keys WHERE NOT key IN node_keys] AS keys
