// Names of the SPG namespaces whose schema is stored in the database.
MATCH (ns:SchemaNamespace)
RETURN ns.name AS name
ORDER BY name
