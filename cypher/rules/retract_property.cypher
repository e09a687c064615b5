// Retract a property a rule derived before, with its provenance.
MATCH (__n{% if label %}:{{ label }}{% endif %})
WHERE __n.{{ by_key }} = $rule_id
REMOVE __n.{{ key }}, __n.{{ by_key }}, __n.{{ version_key }}, __n.{{ as_of_key }}
RETURN count(__n) AS retracted
