// Extracted properties of entities or events (template variable label: Entity or Event), for the
// rows that have some: the first document that gives a key keeps it, and a key never overwrites a
// built-in property (id, name, description, ...).
UNWIND $rows AS row
MATCH (n:`{{ label }}` {id: row.id})
UNWIND keys(row.properties) AS key
SET n[key] = coalesce(n[key], row.properties[key])
