// Existing indexes of this knowledge base (with their vector dimension), to plan which ones a schema
// still needs. Names and labels without the KB's prefix ($kb_prefix; kag_neo4j.store.knowledge_base).
SHOW INDEXES
YIELD name, type, entityType, labelsOrTypes, properties, options
WHERE name STARTS WITH $kb_prefix AND NOT substring(name, size($kb_prefix)) CONTAINS '__'
RETURN substring(name, size($kb_prefix)) AS name, type, entityType,
       [label IN coalesce(labelsOrTypes, []) | CASE entityType WHEN 'NODE' THEN substring(label, size($kb_prefix)) ELSE label END]
         AS labelsOrTypes,
       properties, options.indexConfig['vector.dimensions'] AS dimensions
