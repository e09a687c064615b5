// Nodes (template variable kind: Entity or Event) that no chunk mentions any more are deleted;
// the others get their aliases recomputed
// from the surface forms of the mentions that remain.
UNWIND $ids AS id
MATCH (n:`{{ kind }}` {id: id})
OPTIONAL MATCH (n)-[m:MENTIONED_IN]->(:Chunk)
WITH n, collect(m) AS mentions
CALL (n, mentions) {
  WITH n WHERE size(mentions) = 0
  DETACH DELETE n
  RETURN 1 AS deleted
UNION
  WITH n, mentions WHERE size(mentions) > 0
  UNWIND mentions AS m
  UNWIND coalesce(m.names, []) AS name
  WITH n, collect(DISTINCT name) AS names
  SET n.aliases = [x IN names WHERE x <> n.name]
  SET n.alias_text = reduce(s = '', a IN n.aliases | CASE WHEN s = '' THEN a ELSE s + ' | ' + a END)
  RETURN 0 AS deleted
}
RETURN sum(deleted) AS deleted
