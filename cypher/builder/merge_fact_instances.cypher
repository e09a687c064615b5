// Schema-typed facts that are one event among several between the same two nodes (template
// variables rel_type, source and target labels): one relationship per instance key (a transfer
// row), its properties set from the row; provenance lists are set unions.
UNWIND $rows AS row
MATCH (s:`{{ source }}` {id: row.source})
MATCH (o:`{{ target }}` {id: row.target})
MERGE (s)-[r:`{{ rel_type }}` {instance: row.instance}]->(o)
ON CREATE SET r.chunk_ids = row.chunk_ids, r.doc_ids = row.doc_ids, r.confidence = row.confidence
ON MATCH SET
    r.chunk_ids = reduce(acc = coalesce(r.chunk_ids, []), x IN row.chunk_ids | CASE WHEN x IN acc THEN acc ELSE acc + x END),
    r.doc_ids = reduce(acc = coalesce(r.doc_ids, []), x IN row.doc_ids | CASE WHEN x IN acc THEN acc ELSE acc + x END)
SET r += row.properties
