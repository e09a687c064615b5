// An update file restates a record's relations of one type (template variable rel_type): the
// record's other relations of that type are removed; the restated ones were merged before.
UNWIND $rows AS row
MATCH (s:Entity {id: row.source})-[r:`{{ rel_type }}`]->(o)
WHERE NOT o.id IN row.targets
DELETE r
