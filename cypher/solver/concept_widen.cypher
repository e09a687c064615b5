// Widen a mention through the concept graph when no entity matches it directly: concepts whose
// name matches, their synonyms and sub-concepts (IS_A), and the entities that belong to them.
// An empty $mention_query (punctuation only) skips the fulltext call, which cannot parse it.
WITH $mention_query AS lucene
WHERE lucene <> ''
CALL db.index.fulltext.queryNodes('concept_fulltext', lucene, {limit: 5}) YIELD node AS concept, score
OPTIONAL MATCH (concept)-[:SYNONYM|IS_A*0..2]-(related:Concept)
WITH collect(DISTINCT concept) + collect(DISTINCT related) AS concepts
UNWIND concepts AS c
MATCH (e:Entity)-[:BELONGS_TO]->(c)
RETURN DISTINCT e.id AS id, e.name AS name, c.name AS concept
LIMIT $k
