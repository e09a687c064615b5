// Concept classification: every subject the body yields belongs to the concept $concept_id
// (created, labelled with its concept type, when missing).
{{ body }}
WITH DISTINCT {{ subject }}
MERGE (__concept:Concept {id: $concept_id})
ON CREATE SET __concept.name = $concept_name, __concept.source = $concept_source
SET __concept:{{ concept_label }}
MERGE ({{ subject }})-[__derived:{{ rel_type }} {derived_by: $rule_id}]->(__concept)
SET __derived.rule_version = $rule_version, __derived.as_of = $as_of
RETURN count(__derived) AS derived
