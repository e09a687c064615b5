// Schema-typed facts (template variables rel_type, source and target labels); provenance lists are set unions.
UNWIND $rows AS row
MATCH (s:`{{ source }}` {id: row.source})
MATCH (o:`{{ target }}` {id: row.target})
MERGE (s)-[r:`{{ rel_type }}`]->(o)
ON CREATE SET r.chunk_ids = row.chunk_ids, r.doc_ids = row.doc_ids, r.confidence = row.confidence
ON MATCH SET
    r.chunk_ids = reduce(acc = coalesce(r.chunk_ids, []), x IN row.chunk_ids | CASE WHEN x IN acc THEN acc ELSE acc + x END),
    r.doc_ids = reduce(acc = coalesce(r.doc_ids, []), x IN row.doc_ids | CASE WHEN x IN acc THEN acc ELSE acc + x END),
    r.confidence = CASE WHEN r.confidence IS NULL OR row.confidence > r.confidence THEN row.confidence ELSE r.confidence END
