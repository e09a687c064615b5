// Remove the meta-graph of one SPG namespace: its types, properties and relations
// (the SchemaNamespace node itself is kept and updated by metagraph_namespace).
MATCH (n:SchemaType|SchemaProperty|SchemaRelation)
WHERE n.namespace = $namespace
DETACH DELETE n
