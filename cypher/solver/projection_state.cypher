// What kag_neo4j.solver.projection.current_projection needs, in one read: the graph version (the
// (:KagMeta {key: 'graph'}) counter the builder bumps with every write) and the solver's GDS projections
// ($prefix: kag_<database>_v) with how long ago each was projected.
OPTIONAL MATCH (meta:KagMeta {key: 'graph'})
WITH coalesce(meta.version, 0) AS version
CALL () {
  CALL gds.graph.list() YIELD graphName, creationTime
  WHERE graphName STARTS WITH $prefix
  RETURN collect({name: graphName, age_seconds: duration.inSeconds(creationTime, datetime()).seconds}) AS projections
}
RETURN version, projections
