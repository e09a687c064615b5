// Concept relations of a domain taxonomy (domain_kg edges.json); template variable rel_type is IS_A, PART_OF, ...
UNWIND $rows AS row
MATCH (a:Concept {id: row.source})
MATCH (b:Concept {id: row.target})
MERGE (a)-[r:`{{ rel_type }}`]->(b)
SET r.label = row.label, r.source = 'taxonomy'
