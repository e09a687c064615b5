// The values a property rule just derived (to hold them against the schema's constraints).
MATCH (__n{% if label %}:{{ label }}{% endif %})
WHERE __n.{{ by_key }} = $rule_id
RETURN elementId(__n) AS element, __n.id AS node, __n.{{ key }} AS value
