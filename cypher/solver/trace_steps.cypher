// Trace: one KagStep per executed unit of the run, in order: (:KagRun)-[:HAS_STEP {index}]->(:KagStep).
MATCH (run:KagRun {id: $run_id})
UNWIND $steps AS step
CREATE (node:KagStep {id: step.id})
SET node += step
CREATE (run)-[:HAS_STEP {index: step.index}]->(node)
