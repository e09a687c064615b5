// Trace: the run node. $run holds only primitive properties (JSON text for nested data).
CREATE (run:KagRun {id: $run.id})
SET run += $run, run.created_at = datetime()
RETURN run.id AS id
