// merge_title_anchors v1 — title anchors kept as relationships, (:Entity)-[:TITLE_ANCHOR]->(:Chunk): an entity
// whose resolution key (name_key) is a document's title key (Document.title_key) titles that document's
// chunks, the hop from a mention of a thing to its page that PageRank walks (procedures/project_graph.cypher,
// hybrid_retrieval_local.cypher). A chunk that mentions the entity gets no anchor: the mention already
// joins them. Runs in the transaction that writes the chunks $chunk_ids (after their MENTIONED_IN edges)
// and the entities $entity_ids; migrations/0003_title_anchors.cypher made those of graphs written before.
// Deleting a chunk or an entity (DETACH DELETE) deletes its anchors.
CALL () {
  UNWIND $chunk_ids AS id
  MATCH (c:Chunk {id: id})
  CALL (c) {  // into the chunk: the entities its document's title names
    MATCH (c)-[:PART_OF]->(d:Document) WHERE d.title_key <> ''
    MATCH (e:Entity {name_key: d.title_key}) WHERE NOT (e)-[:MENTIONED_IN]->(c)
    MERGE (e)-[:TITLE_ANCHOR]->(c)
  }
  CALL (c) {  // an anchor that a mention now doubles is dropped
    MATCH (e:Entity)-[r:TITLE_ANCHOR]->(c) WHERE (e)-[:MENTIONED_IN]->(c)
    DELETE r
  }
}
CALL () {  // out of the entities: the chunks of the documents their names title
  UNWIND $entity_ids AS id
  MATCH (e:Entity {id: id}) WHERE e.name_key <> ''
  MATCH (t:Chunk)-[:PART_OF]->(:Document {title_key: e.name_key}) WHERE NOT (e)-[:MENTIONED_IN]->(t)
  MERGE (e)-[:TITLE_ANCHOR]->(t)
}
