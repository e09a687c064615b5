// Tell readers (the solver's GDS projection) that the graph changed: runs inside every builder
// transaction that changes the knowledge graph (chunks and facts, completion, deletes, taxonomy).
MERGE (m:KagMeta {key: 'graph'})
SET m.version = coalesce(m.version, 0) + 1, m.updated_at = datetime(), m.reason = $reason
RETURN m.version AS version
