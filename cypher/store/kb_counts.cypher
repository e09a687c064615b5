// The size of one knowledge base (its queries are scoped to it), for `kag-neo4j kb list`.
CALL () { MATCH (n:Document) RETURN count(n) AS documents }
CALL () { MATCH (n:Chunk) RETURN count(n) AS chunks }
CALL () { MATCH (n:Entity) RETURN count(n) AS entities }
CALL () { MATCH (n:KagMigration) RETURN count(n) AS migrations }
RETURN documents, chunks, entities, migrations
