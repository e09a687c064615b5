// Remove derived values that break the schema's constraints, with their provenance.
MATCH (__n)
WHERE elementId(__n) IN $elements AND __n.{{ by_key }} = $rule_id
REMOVE __n.{{ key }}, __n.{{ by_key }}, __n.{{ version_key }}, __n.{{ as_of_key }}
RETURN count(__n) AS dropped
