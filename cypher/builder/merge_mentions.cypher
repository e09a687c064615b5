// The mutual index: (node)-[:MENTIONED_IN {count, names}]->(:Chunk); template variable kind is Entity or Event.
UNWIND $rows AS row
MATCH (n:{{ kind }} {id: row.node})
MATCH (c:Chunk {id: row.chunk})
MERGE (n)-[m:MENTIONED_IN]->(c)
SET m.count = row.count, m.names = row.names
