// Existing constraints of this knowledge base, to plan which ones a schema still needs. Names and
// labels without the KB's prefix ($kb_prefix; kag_neo4j.store.knowledge_base).
SHOW CONSTRAINTS
YIELD name, type, entityType, labelsOrTypes, properties
WHERE name STARTS WITH $kb_prefix AND NOT substring(name, size($kb_prefix)) CONTAINS '__'
RETURN substring(name, size($kb_prefix)) AS name, type, entityType,
       [label IN coalesce(labelsOrTypes, []) | CASE entityType WHEN 'NODE' THEN substring(label, size($kb_prefix)) ELSE label END]
         AS labelsOrTypes,
       properties
