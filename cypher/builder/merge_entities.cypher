// Entities that share one set of schema labels (the template variable labels, validated by render()).
// Aliases are a set union; the name and the vector are written once, when the entity is new; the
// description and semantic type come from the first document that gives them (the same rule
// `kag-neo4j delete` applies when it recomputes them); extracted properties: set_node_properties.
UNWIND $rows AS row
MERGE (e:Entity {id: row.id})
ON CREATE SET e.name = row.name, e.name_key = row.key, e.family = row.family, e.aliases = row.aliases,
    e.description = row.description, e.semantic_type = row.semantic_type
ON MATCH SET e.aliases = reduce(acc = coalesce(e.aliases, []), a IN row.aliases |
        CASE WHEN a IN acc OR a = e.name THEN acc ELSE acc + a END),
    e.description = CASE WHEN coalesce(e.description, '') = '' THEN row.description ELSE e.description END,
    e.semantic_type = coalesce(e.semantic_type, row.semantic_type)
SET e.alias_text = reduce(s = '', a IN e.aliases | CASE WHEN s = '' THEN a ELSE s + ' | ' + a END)
{%- for label in labels %}
SET e:`{{ label }}`
{%- endfor %}
WITH e, row
WHERE row.embedding IS NOT NULL AND e.embedding IS NULL
CALL db.create.setNodeVectorProperty(e, 'embedding', row.embedding)
