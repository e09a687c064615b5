"""A small fixture graph for the solver's integration tests, written with the builder's writer.

Fictional facts (so no model could know them):

* the Harrow Valley Rail Company (Organization, property ``foundedIn = 1871``) was founded by
  Ada Pembroke — a schema relation ``(:Person)-[:founded]->(:Organization)``;
* Ada Pembroke was born in Kestrel Bay — ``(:Person)-[:bornIn]->(:Town)``;
* Ada designed the Millbrook Viaduct — an open fact ``[:RELATED {predicate: 'designed'}]``;
* the viaduct *opened in 1899* is only in the text (no fact), so a step needs the chunks;
* Kestrel Bay's harbour and the Greyfell mines are only reachable through the graph (PPR).
"""

from __future__ import annotations

import hashlib

from kag_neo4j.builder.aligned_document import AlignedDocument, EntityNode, FactEdge, Mention
from kag_neo4j.builder.records import ChunkRecord, SourceDocument
from kag_neo4j.builder.write import GraphWriter, bump_graph_version
from kag_neo4j.models.base import Embedder
from kag_neo4j.store.database import Database

DOCS: dict[str, tuple[str, str]] = {
    "hvrc": ("Harrow Valley Rail Company",
             ("The Harrow Valley Rail Company was founded in 1871 in the town of Millbrook by the civil "
              "engineer Ada Pembroke.")),
    "viaduct": ("Millbrook Viaduct",
                ("The Millbrook Viaduct is a stone railway bridge over the Harrow River. Construction began "
                 "in 1896 and the viaduct opened in 1899.")),
    "ada": ("Ada Pembroke", "Ada Pembroke (1839-1910) was a civil engineer born in Kestrel Bay."),
    "kestrel": ("Kestrel Bay", "The harbour of this fishing town shelters forty trawlers every winter."),
    "nile": ("Nile", "The Nile is a major north-flowing river in northeastern Africa."),
}

ENTITIES: dict[str, tuple[str, str, dict[str, object]]] = {
    "org:hvrc": ("Harrow Valley Rail Company", "Organization", {"foundedIn": 1871}),
    "person:ada": ("Ada Pembroke", "Person", {}),
    "bridge:viaduct": ("Millbrook Viaduct", "Bridge", {}),
    "town:kestrel": ("Kestrel Bay", "Town", {}),
    "river:nile": ("Nile", "River", {}),
}

MENTIONS: dict[str, list[str]] = {
    "hvrc": ["org:hvrc", "person:ada"],
    "viaduct": ["bridge:viaduct"],
    "ada": ["person:ada", "town:kestrel"],
    "kestrel": ["town:kestrel"],
    "nile": ["river:nile"],
}

FACTS = [
    # (source, target, chunk doc, predicate, rel_type, confidence)
    ("person:ada", "org:hvrc", "hvrc", "founded", "founded", 1.0),
    ("person:ada", "town:kestrel", "ada", "bornIn", "bornIn", 1.0),
    ("person:ada", "bridge:viaduct", "ada", "designed", None, 0.6),
]


def chunk_id(doc: str) -> str:
    return f"{doc}#0#0"


def _one_chunk_document(embedder: Embedder, doc: str, title: str, text: str) -> AlignedDocument:
    source = SourceDocument(id=doc, title=title, source=f"{doc}.md", text=text,
                            sha256=hashlib.sha256(text.encode()).hexdigest())
    chunk = ChunkRecord(id=chunk_id(doc), document_id=doc, text=text, title=title, position=0, paragraph=0, index=0)
    aligned = AlignedDocument(document=source, chunks=[chunk])
    aligned.chunk_vectors[chunk.id] = embedder.embed_documents([text])[0]
    return aligned


def write_fixture_graph(db: Database, embedder: Embedder) -> None:
    documents = []
    for doc, (title, text) in DOCS.items():
        aligned = _one_chunk_document(embedder, doc, title, text)
        chunk = aligned.chunks[0]
        for entity_id in MENTIONS[doc]:
            name, label, props = ENTITIES[entity_id]
            aligned.entities[entity_id] = EntityNode(
                id=entity_id, name=name, key=name.casefold(), family=label.casefold(), labels=(label,),
                description=f"{name}, a {label.lower()}", properties=dict(props),  # type: ignore[arg-type]
                embedding=embedder.embed_query(name),
            )
            aligned.mentions.append(Mention(node_id=entity_id, chunk_id=chunk.id, count=1, names=[name]))
        for source_id, target_id, fact_doc, predicate, rel_type, confidence in FACTS:
            if fact_doc != doc:
                continue
            for entity_id in (source_id, target_id):
                if entity_id not in aligned.entities:
                    name, label, props = ENTITIES[entity_id]
                    aligned.entities[entity_id] = EntityNode(
                        id=entity_id, name=name, key=name.casefold(), family=label.casefold(), labels=(label,),
                        properties=dict(props), embedding=embedder.embed_query(name),  # type: ignore[arg-type]
                    )
            aligned.facts.append(FactEdge(source_id=source_id, target_id=target_id, chunk_id=chunk.id,
                                          predicate=predicate, rel_type=rel_type, confidence=confidence))
        documents.append(aligned)
    GraphWriter(db).write(documents)
    bump_graph_version(db, "solver test fixture")


def write_unlinked_document(db: Database, embedder: Embedder, doc: str, title: str, text: str) -> None:
    """One more document whose only chunk mentions no entity (reachable by its title, not by a link)."""
    GraphWriter(db).write([_one_chunk_document(embedder, doc, title, text)])
    bump_graph_version(db, "solver test fixture: an unlinked document")


def knowledge_counts(db: Database) -> dict[str, int]:
    """Nodes and relationships outside the trace (what question answering must never change)."""
    row = db.read(
        "MATCH (n) WHERE NOT n:KagRun AND NOT n:KagStep WITH count(n) AS nodes "
        "OPTIONAL MATCH (a)-[r]->(b) WHERE NOT a:KagRun AND NOT a:KagStep "
        "RETURN nodes, count(r) AS rels"
    )[0]
    return {"nodes": row["nodes"], "rels": row["rels"]}
