// A derived property: the body yields (subject, __value) rows; a subject whose rows agree on one
// value gets it, with its provenance, unless it already holds a value the rule did not derive.
{{ body }}
WITH {{ subject }}, collect(DISTINCT __value) AS __values
WHERE size(__values) = 1 AND {{ subject }}.{{ key }} IS NULL
SET {{ subject }}.{{ key }} = __values[0], {{ subject }}.{{ by_key }} = $rule_id,
    {{ subject }}.{{ version_key }} = $rule_version, {{ subject }}.{{ as_of_key }} = $as_of
RETURN count({{ subject }}) AS derived
