// Every label in use as stored, with knowledge-base prefixes (kag_neo4j.store.kb_admin): `YIELD label AS
// stored` keeps a knowledge base's rewrite (which would list only its own labels) away from this query.
CALL db.labels() YIELD label AS stored
RETURN collect(stored) AS labels
