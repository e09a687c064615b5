// Typed records and concepts already in the graph that the names of an S,P,O table may denote:
// entities with a record id whose name key is one of $keys, concepts whose id is one of
// $concept_ids (with each of their type labels). RecordIndex.add_known takes them.
MATCH (n:Entity)
WHERE n.name_key IN $keys AND n.record_id IS NOT NULL AND n.family IS NOT NULL
RETURN n.family AS type, n.record_id AS id, n.name AS name
UNION
MATCH (c:Concept)
WHERE c.id IN $concept_ids
UNWIND [label IN labels(c) WHERE label <> 'Concept'] AS type
RETURN type, c.name AS id, c.name AS name
