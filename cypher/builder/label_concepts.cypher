// Concepts of a concept table get their ConceptType label (template variable label, validated by render()).
UNWIND $ids AS id
MATCH (c:Concept {id: id})
SET c:`{{ label }}`
