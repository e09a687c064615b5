// bench_graph_size v1 — what the latency benchmark ran on.
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks }
CALL () { MATCH (e:Entity) RETURN count(e) AS entities }
CALL () { MATCH (:Entity)-[m:MENTIONED_IN]->(:Chunk) RETURN count(m) AS mentions }
CALL () { MATCH (:Entity)-[r]->(:Entity) RETURN count(r) AS facts }
RETURN chunks, entities, mentions, facts
