// Trace: the most recent runs (for `kag-neo4j trace` without an id).
MATCH (run:KagRun)
RETURN run.id AS id, run.question AS question, run.answer AS answer, run.created_at AS created_at
ORDER BY run.created_at DESC
LIMIT $limit
