// The solver's GDS projections ($prefix: kag_<database>_v) and how long ago each was projected.
CALL gds.graph.list() YIELD graphName, creationTime
WHERE graphName STARTS WITH $prefix
RETURN graphName AS name, duration.inSeconds(creationTime, datetime()).seconds AS age_seconds
