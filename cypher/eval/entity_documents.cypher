// entity_documents v1 — for each entity id in $entity_ids, the documents it leads to in one step of the
// PageRank graph (procedures/project_graph.cypher v2): those with a chunk it is MENTIONED_IN, and
// those its name titles (title anchors). Scores query-time entity linking (kag_neo4j.eval.linking).
UNWIND $entity_ids AS id
MATCH (entity:Entity {id: id})
CALL (entity) {
  MATCH (entity)-[:MENTIONED_IN]->(:Chunk)-[:PART_OF]->(document:Document)
  RETURN document
  UNION
  MATCH (document:Document {title_key: entity.name_key}) WHERE entity.name_key <> ''
  RETURN document
}
RETURN entity.id AS entity_id, collect(DISTINCT document.id) AS document_ids
