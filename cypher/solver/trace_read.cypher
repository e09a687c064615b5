// Trace: one run with its steps (in order), what each step used, and the chunks the answer cites.
MATCH (run:KagRun {id: $run_id})
CALL (run) {
  OPTIONAL MATCH (run)-[:HAS_STEP]->(step:KagStep)
  WITH step ORDER BY step.index
  CALL (step) {
    OPTIONAL MATCH (step)-[u:USED]->(n)
    WITH u, n ORDER BY u.rank
    RETURN collect(CASE WHEN n IS NULL THEN null ELSE
             {kind: CASE WHEN n:Chunk THEN 'Chunk' ELSE 'Entity' END, id: n.id,
              name: coalesce(n.name, n.title, n.id), rank: u.rank, score: u.score} END) AS used
  }
  RETURN collect(CASE WHEN step IS NULL THEN null ELSE {step: properties(step), used: used} END) AS steps
}
CALL (run) {
  OPTIONAL MATCH (run)-[c:CITES]->(chunk:Chunk)
  WITH c, chunk ORDER BY c.rank
  RETURN collect(chunk.id) AS cited
}
RETURN properties(run) AS run, steps, cited
