// Sizes of the knowledge graph, for load summaries and tests (facts start at entities, events or concepts).
CALL () { MATCH (n:Document) RETURN count(n) AS documents }
CALL () { MATCH (n:Chunk) RETURN count(n) AS chunks }
CALL () { MATCH (n:Entity) RETURN count(n) AS entities }
CALL () { MATCH (n:Event) RETURN count(n) AS events }
CALL () { MATCH (n:Concept) RETURN count(n) AS concepts }
CALL () { MATCH (:Entity)-[r:MENTIONED_IN]->(:Chunk) RETURN count(r) AS mentions }
CALL () { MATCH (:Entity|Event|Concept)-[r]->() WHERE r.chunk_ids IS NOT NULL AND NOT r:BELONGS_TO RETURN count(r) AS relations }
CALL () { MATCH (:Entity|Event|Concept)-[r:RELATED]->() RETURN count(r) AS open_relations }
CALL () { MATCH (:Entity|Event|Concept)-[r:BELONGS_TO]->() RETURN count(r) AS concept_links }
CALL () { MATCH (:Chunk)-[r:NEXT]->(:Chunk) RETURN count(r) AS next_edges }
RETURN documents, chunks, entities, events, concepts, mentions, relations, open_relations, concept_links, next_edges
