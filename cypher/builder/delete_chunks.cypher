// A document's chunks, with their MENTIONED_IN, PART_OF and NEXT edges.
MATCH (c:Chunk)-[:PART_OF]->(:Document {id: $doc_id})
DETACH DELETE c
RETURN count(*) AS deleted
