// Events that share one set of schema event labels (template variable labels, validated by render()).
// Extracted properties: set_node_properties.
UNWIND $rows AS row
MERGE (v:Event {id: row.id})
ON CREATE SET v.name = row.name, v.name_key = row.key, v.family = row.family
SET v.event_type = coalesce(v.event_type, row.event_type),
    v.description = CASE WHEN coalesce(v.description, '') = '' THEN row.description ELSE v.description END
{%- for label in labels %}
SET v:`{{ label }}`
{%- endfor %}
