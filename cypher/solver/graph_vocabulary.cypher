// The vocabulary of the loaded graph, for the planner: labels, relationship types and the most
// frequent open-fact predicates (RELATED.predicate). $k caps the predicates.
CALL () {
  CALL db.labels() YIELD label
  RETURN collect(label) AS labels
}
CALL () {
  CALL db.relationshipTypes() YIELD relationshipType
  RETURN collect(relationshipType) AS types
}
CALL () {
  OPTIONAL MATCH (:Entity|Event|Concept)-[r:RELATED]->()
  WITH r.predicate AS predicate, count(r) AS uses
  WHERE predicate IS NOT NULL
  ORDER BY uses DESC, predicate ASC
  LIMIT $k
  RETURN collect(predicate) AS predicates
}
RETURN labels, types, predicates
