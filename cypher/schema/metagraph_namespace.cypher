// Create or update the SchemaNamespace node of one SPG namespace.
MERGE (ns:SchemaNamespace {name: $row.name})
SET ns += $row, ns.applied_at = datetime()
