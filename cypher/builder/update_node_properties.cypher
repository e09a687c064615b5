// Properties of entities or events from an update file (template variable label: Entity or
// Event): each value replaces the stored one (set_node_properties keeps the first instead).
UNWIND $rows AS row
MATCH (n:`{{ label }}` {id: row.id})
SET n += row.properties
