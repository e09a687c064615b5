// A derived relation: the rule's pattern (body) gives the (subject, object) pairs; each pair gets
// one edge merged on derived_by, so an extracted edge of the same type is never touched and a
// re-apply never duplicates.
{{ body }}
WITH DISTINCT {{ subject }}, {{ object }}
MERGE ({{ subject }})-[__derived:{{ rel_type }} {derived_by: $rule_id}]->({{ object }})
SET __derived.rule_version = $rule_version, __derived.as_of = $as_of
RETURN count(__derived) AS derived
