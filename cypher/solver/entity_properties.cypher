// Property values of anchor entities whose key matches a predicate (e.g. foundedIn = 1902).
// $predicates: property keys to accept (kag_neo4j.store.keys.predicate_key: NFKC, no spaces/_/-, lower case),
// or null for every property.
UNWIND $anchor_ids AS anchor_id
MATCH (s:Entity {id: anchor_id})
UNWIND keys(s) AS key
WITH s, key
WHERE NOT key IN ['id', 'name', 'aliases', 'alias_text', 'description', 'embedding', 'summary',
                  'semantic_type', 'chunk_ids', 'doc_ids', 'name_key', 'family']
  AND ($predicates IS NULL OR toLower(reduce(s = normalize(key, NFKC), c IN [' ', '\t', '\n', '\r', '_', '-'] | replace(s, c, ''))) IN $predicates)
MATCH (s)-[:MENTIONED_IN]->(c:Chunk)
RETURN s.id AS subject_id, s.name AS subject, key AS predicate, s[key] AS value,
       collect(DISTINCT c.id)[0..5] AS chunk_ids
