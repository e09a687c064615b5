// The vector indexes of this knowledge base, names and labels without its prefix ($kb_prefix).
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
WHERE name STARTS WITH $kb_prefix AND NOT substring(name, size($kb_prefix)) CONTAINS '__'
RETURN substring(name, size($kb_prefix)) AS name, [label IN labelsOrTypes | substring(label, size($kb_prefix))] AS labels,
       properties, options.indexConfig['vector.dimensions'] AS dimensions
