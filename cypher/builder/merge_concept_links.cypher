// (:Entity)-[:BELONGS_TO {chunk_ids, doc_ids}]->(:Concept); a taxonomy concept not yet loaded is created bare.
UNWIND $rows AS row
MATCH (e:Entity {id: row.entity})
MERGE (c:Concept {id: row.concept})
ON CREATE SET c.name = row.concept_name, c.source = 'extraction'
MERGE (e)-[r:BELONGS_TO]->(c)
SET r.chunk_ids = reduce(acc = coalesce(r.chunk_ids, []), x IN row.chunk_ids | CASE WHEN x IN acc THEN acc ELSE acc + x END),
    r.doc_ids = reduce(acc = coalesce(r.doc_ids, []), x IN row.doc_ids | CASE WHEN x IN acc THEN acc ELSE acc + x END)
