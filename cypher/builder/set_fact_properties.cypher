// Extracted properties of schema-typed facts (template variables rel_type, source and target
// labels), for the rows that have some: the first document that gives a key keeps it, and a key
// never overwrites a built-in one (chunk_ids, doc_ids, confidence).
UNWIND $rows AS row
MATCH (:`{{ source }}` {id: row.source})-[r:`{{ rel_type }}`]->(:`{{ target }}` {id: row.target})
UNWIND keys(row.properties) AS key
SET r[key] = coalesce(r[key], row.properties[key])
