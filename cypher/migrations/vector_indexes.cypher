SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
RETURN name, labelsOrTypes AS labels, properties, options.indexConfig['vector.dimensions'] AS dimensions
