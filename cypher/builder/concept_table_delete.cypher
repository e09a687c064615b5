// Delete the concepts a concept table wrote, with every relationship to or from them (their
// IS_A hierarchy, the records' links to them, classifications), and the table's record.
MATCH (c:Concept {taxonomy: $taxonomy})
OPTIONAL MATCH (c)-[r]-()
WITH collect(DISTINCT c) AS concepts, count(DISTINCT r) AS links
FOREACH (c IN concepts | DETACH DELETE c)
WITH size(concepts) AS deleted, links
OPTIONAL MATCH (m:KagMeta {key: $key})
DELETE m
RETURN deleted, links
