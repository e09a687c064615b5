// Extracted entity properties, for the rows that have some: the first document that gives a key
// keeps it, and a key never overwrites a built-in property (id, name, description, ...).
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
UNWIND keys(row.properties) AS key
SET e[key] = coalesce(e[key], row.properties[key])
