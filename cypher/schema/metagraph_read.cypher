// The stored meta-graph of one namespace as flat rows (node properties).
MATCH (ns:SchemaNamespace {name: $namespace})
OPTIONAL MATCH (n:SchemaType|SchemaProperty|SchemaRelation)
WHERE n.namespace = $namespace
RETURN properties(ns) AS namespace,
       [node IN collect(n) | {kind: head([label IN labels(node) WHERE label STARTS WITH 'Schema']),
                              row: properties(node)}] AS nodes
