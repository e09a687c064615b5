"""GDS and APOC are really there: Personalized PageRank runs inside the database."""

from __future__ import annotations

from kag_neo4j.store.database import Database


def test_versions(db: Database) -> None:
    row = db.read("RETURN gds.version() AS gds, apoc.version() AS apoc")[0]
    assert row["gds"].startswith("2.")
    assert row["apoc"].startswith("5.26")


def test_personalized_pagerank_favours_the_seed_neighbourhood(db: Database) -> None:
    db.write(
        "CREATE (a:T {n: 'a'})-[:R]->(b:T {n: 'b'})-[:R]->(c:T {n: 'c'}), "
        "(x:T {n: 'x'})-[:R]->(y:T {n: 'y'})-[:R]->(z:T {n: 'z'}), (c)-[:R]->(x)"
    )
    db.read(
        "MATCH (s:T)-[r:R]->(t:T) WITH gds.graph.project('ppr_test', s, t, {}, "
        "{undirectedRelationshipTypes: ['*']}) AS g RETURN g.nodeCount AS nodes"
    )
    rows = db.read(
        "MATCH (seed:T {n: $seed}) CALL gds.pageRank.stream('ppr_test', {sourceNodes: [seed], dampingFactor: 0.85}) "
        "YIELD nodeId, score RETURN gds.util.asNode(nodeId).n AS n, score ORDER BY score DESC",
        seed="a",
    )
    ranked = [row["n"] for row in rows]
    assert ranked.index("a") < ranked.index("z")
    assert ranked.index("b") < ranked.index("y")
    scores = {row["n"]: row["score"] for row in rows}
    assert scores["z"] < scores["b"]
