"""Entity resolution without a database: merges across documents, aliases, embeddings, batch boundaries."""

from __future__ import annotations

from typing import Any

import pytest

from kag_neo4j.builder.alignment import Aligner
from kag_neo4j.builder.records import ChunkExtraction, ExtractedEntity
from kag_neo4j.builder.resolution import NoLookup, Resolver
from kag_neo4j.models.hashing import HashingEmbedder
from tests.unit.builder.alignment_support import doc, ent


def _two_docs(first: list[ExtractedEntity], second: list[ExtractedEntity]):
    aligner = Aligner()
    d1, c1 = doc("d1", "one")
    d2, c2 = doc("d2", "two")
    a1 = aligner.align_document(d1, c1, [ChunkExtraction(chunk_id=c1[0].id, entities=first)])
    a2 = aligner.align_document(d2, c2, [ChunkExtraction(chunk_id=c2[0].id, entities=second)])
    return a1, a2


def test_same_id_across_documents_counts_as_a_merge() -> None:
    a1, a2 = _two_docs([ent("Paris")], [ent("Paris"), ent("Lyon")])
    stats = Resolver(NoLookup()).resolve([a1, a2])
    assert (stats.entity_records, stats.new_entities, stats.merged) == (3, 2, 1)


def test_alias_in_an_earlier_document_merges_a_later_name() -> None:
    a1, a2 = _two_docs([ent("Barack Obama", aliases=["Obama"])], [ent("Obama")])
    stats = Resolver(NoLookup()).resolve([a1, a2])
    assert stats.alias_merges == 1
    assert list(a2.entities) == ["entity:barack obama"]
    assert a2.mentions[0].node_id == "entity:barack obama" and a2.mentions[0].names == ["Obama"]


def test_graph_entities_are_marked_existing_and_alias_ids_found() -> None:
    class Graph(NoLookup):
        def existing(self, ids):
            return {i for i in ids if i in {"entity:paris", "entity:barack obama"}}

    a1, a2 = _two_docs([ent("Paris")], [ent("Obama", aliases=["Barack Obama"])])
    stats = Resolver(Graph()).resolve([a1, a2])
    assert a1.entities["entity:paris"].existing
    assert list(a2.entities) == ["entity:barack obama"] and a2.entities["entity:barack obama"].existing
    assert stats.new_entities == 0 and stats.merged == 2


def test_embedding_merge_needs_similarity_and_a_lexical_match() -> None:
    embedder = HashingEmbedder(256)
    a1, a2 = _two_docs([ent("Jean-Paul Sartre"), ent("1990 World Cup")], [ent("Jean Paul Sartre."), ent("1994 World Cup")])
    # name keys differ only by punctuation: identical keys already ("jean paul sartre")
    assert "entity:jean paul sartre" in a1.entities and "entity:jean paul sartre" in a2.entities
    a1, a2 = _two_docs([ent("Charles Babbage")], [ent("Charles Babbages")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=0.8).resolve([a1, a2])
    assert stats.similarity_merges == 1 and list(a2.entities) == ["entity:charles babbage"]
    a1, a2 = _two_docs([ent("1990 World Cup")], [ent("1994 World Cup")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=0.5).resolve([a1, a2])
    assert stats.similarity_merges == 0  # numbers differ: never merged, however similar
    a1, a2 = _two_docs([ent("Charles Babbage")], [ent("Charles Babbages")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=None).resolve([a1, a2])
    assert stats.similarity_merges == 0


class MemoryLookup:
    """A graph stand-in: remembers what earlier batches 'wrote'."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}

    def write(self, docs) -> None:
        from kag_neo4j.builder.names import name_key

        for d in docs:
            for node in d.entities.values():
                have = self.nodes.setdefault(node.id, {"family": node.family, "key": node.key, "aliases": set(),
                                                       "name": node.name, "vector": node.embedding})
                if have["vector"] is None:
                    have["vector"] = node.embedding
            for m in d.mentions:
                self.nodes[m.node_id]["aliases"].update(n for n in m.names if name_key(n) != self.nodes[m.node_id]["key"])

    def existing(self, ids):
        return {i for i in ids if i in self.nodes}

    def by_alias(self, rows):
        from kag_neo4j.builder.names import name_key

        found: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            for node_id, node in self.nodes.items():
                if node["family"] == row["family"] and any(name_key(a) == row["key"] for a in node["aliases"]):
                    found.setdefault(row["id"], []).append({"match": node_id, "key": node["key"], "family": node["family"],
                                                            "aliases": sorted(node["aliases"])})
        return found

    def similar(self, rows, *, min_cosine, k):
        import numpy as np

        found: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            q = np.asarray(row["vector"])
            for node_id, node in self.nodes.items():
                if node["vector"] is None or node["family"] != row["family"]:
                    continue
                v = np.asarray(node["vector"])
                cosine = float(q @ v / (np.linalg.norm(q) * np.linalg.norm(v)))
                if cosine >= min_cosine:
                    found.setdefault(row["id"], []).append({"match": node_id, "key": node["key"], "family": node["family"],
                                                            "name": node["name"], "cosine": cosine})
        return found


@pytest.mark.parametrize("cuts", [[1], [2, 4], [1, 2, 3, 4], [3], [6], [7], [5, 6, 7], [9, 10]])
def test_resolution_does_not_depend_on_batch_boundaries(cuts: list[int]) -> None:
    embedder = HashingEmbedder(256)
    def person(name: str, **kw: Any) -> ExtractedEntity:
        return ent(name, "Person", **kw)

    names = [[person("Ada Lovelace"), person("Charles Babbage")], [person("Babbage"), person("Charles Babbages")],
             [person("Ada Lovelace", aliases=["Lovelace"]), ent("Analytical Engine")],
             [person("Lovelace"), person("Charles Babbage")], [ent("Analytical Engines"), person("Babbage")],
             [person("Barack Obama")], [person("Barack Obama", aliases=["Obama"])], [person("Obama")],
             [person("Jake Ryan")], [person("Paul Ryan")], [person("Ryan")]]

    def run(boundaries: list[int]) -> list[list[str]]:
        aligner = Aligner()
        docs = []
        for i, group in enumerate(names):
            d, c = doc(f"d{i}", " ".join(e.name for e in group))
            docs.append(aligner.align_document(d, c, [ChunkExtraction(chunk_id=c[0].id, entities=group)]))
        graph = MemoryLookup()
        resolver = Resolver(graph, embedder.embed_documents, similarity=0.75)
        start = 0
        for cut in [*boundaries, len(docs)]:
            resolver.resolve(docs[start:cut])
            graph.write(docs[start:cut])
            start = cut
        return [sorted(d.entities) for d in docs]

    one_batch = run([])
    assert one_batch[3] == ["entity:ada lovelace", "entity:charles babbage"]  # "Lovelace" is an alias
    assert one_batch[1] == ["entity:charles babbage"]  # "Babbage", "Charles Babbages" merged by embedding
    assert one_batch[7] == ["entity:barack obama"]  # an alias another document gave it
    assert one_batch[9] == ["entity:paul ryan"] and one_batch[10] == ["entity:ryan"]  # ambiguous surname stays apart
    assert run(cuts) == one_batch


def test_embedding_merge_respects_semantic_types() -> None:
    embedder = HashingEmbedder(256)
    a1, a2 = _two_docs([ent("Charles Babbage", "Person")], [ent("Charles Babbages", "Organization")])
    stats = Resolver(NoLookup(), embedder.embed_documents, similarity=0.8).resolve([a1, a2])
    assert stats.similarity_merges == 0
    a1, a2 = _two_docs([ent("Charles Babbage", "Person")], [ent("Charles Babbages", "Person")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.8).resolve([a1, a2]).similarity_merges == 1


def test_a_bare_surname_joins_one_namesake_but_not_two() -> None:
    embedder = HashingEmbedder(256)
    a1, a2 = _two_docs([ent("Jake Ryan", "Person")], [ent("Ryan", "Person")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.6).resolve([a1, a2]).similarity_merges == 1
    assert list(a2.entities) == ["entity:jake ryan"]
    a1, a2 = _two_docs([ent("Jake Ryan", "Person"), ent("Paul Ryan", "Person")], [ent("Ryan", "Person")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.6).resolve([a1, a2]).similarity_merges == 0
    # and never for things that are not people
    a1, a2 = _two_docs([ent("Grand Central Terminal", "Location")], [ent("Terminal", "Location")])
    assert Resolver(NoLookup(), embedder.embed_documents, similarity=0.5).resolve([a1, a2]).similarity_merges == 0
