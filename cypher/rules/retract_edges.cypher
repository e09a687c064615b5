// Retract the edges of one type a rule derived before.
MATCH (:Entity|Event|Concept)-[__r:{{ rel_type }} {derived_by: $rule_id}]->()
DELETE __r
RETURN count(__r) AS retracted
