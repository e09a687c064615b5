// Injection benchmark: the labels and relationship types in use and the property keys the
// database knows, compared before and after a hostile load.
CALL () {
  CALL db.labels() YIELD label
  RETURN collect(label) AS labels
}
CALL () {
  CALL db.relationshipTypes() YIELD relationshipType
  RETURN collect(relationshipType) AS types
}
CALL () {
  CALL db.propertyKeys() YIELD propertyKey
  RETURN collect(propertyKey) AS keys
}
RETURN labels, types, keys
