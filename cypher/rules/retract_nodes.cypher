// Retract the nodes a rule's Action created before (with their edges).
MATCH (__n:{{ label }} {derived_by: $rule_id})
DETACH DELETE __n
RETURN count(__n) AS retracted
