// Existing indexes (with their vector dimension), to plan which ones a schema still needs.
SHOW INDEXES
YIELD name, type, entityType, labelsOrTypes, properties, options
RETURN name, type, entityType, labelsOrTypes, properties,
       options.indexConfig['vector.dimensions'] AS dimensions
