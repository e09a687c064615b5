// Trace: (:KagStep)-[:DEPENDS_ON]->(:KagStep) for every step that read an alias another step bound.
UNWIND $edges AS edge
MATCH (later:KagStep {id: edge.source})
MATCH (earlier:KagStep {id: edge.target})
CREATE (later)-[:DEPENDS_ON]->(earlier)
