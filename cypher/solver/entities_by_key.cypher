// Entities whose resolution key (Entity.name_key, index entity_name_key) is one of $keys: the exact-name
// links of a question's mentions (kag_neo4j.solver.linking.link_exact), in a stable order. With
// $max_chunks not null, an entity mentioned in more chunks than that (a hub: "the United States") is left out.
UNWIND $keys AS key
MATCH (e:Entity {name_key: key})
WHERE $max_chunks IS NULL OR COUNT { (e)-[:MENTIONED_IN]->(:Chunk) } <= $max_chunks
RETURN key, e.id AS id
ORDER BY key, id
