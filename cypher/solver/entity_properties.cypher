// Property values of anchor entities whose key matches a predicate (e.g. foundedIn = 1902), with
// the rule that derived it (`<key>_derived_by`, `<key>_rule_version`; those keys are not values).
// $predicates: property keys to accept (kag_neo4j.store.keys.predicate_key: NFKC, no spaces/_/-, lower case),
// or null for every property.
UNWIND $anchor_ids AS anchor_id
MATCH (s:Entity {id: anchor_id})
UNWIND keys(s) AS key
WITH s, key
WHERE NOT key IN ['id', 'name', 'aliases', 'alias_text', 'description', 'embedding', 'summary',
                  'semantic_type', 'chunk_ids', 'doc_ids', 'name_key', 'family']
  AND NOT any(suffix IN ['_derived_by', '_rule_version', '_as_of'] WHERE key ENDS WITH suffix
              AND s[left(key, size(key) - size(suffix)) + '_derived_by'] IS NOT NULL)
  AND ($predicates IS NULL OR toLower(reduce(s = normalize(key, NFKC), c IN [' ', '\t', '\n', '\r', '_', '-'] | replace(s, c, ''))) IN $predicates)
OPTIONAL MATCH (s)-[:MENTIONED_IN]->(c:Chunk)
RETURN s.id AS subject_id, s.name AS subject, key AS predicate, s[key] AS value,
       collect(DISTINCT c.id)[0..5] AS chunk_ids, s[key + '_derived_by'] AS derived_by,
       s[key + '_rule_version'] AS rule_version
