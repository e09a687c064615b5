"""Entity resolution: a batch of aligned documents, in order, against each other and the graph.

Ids that already exist are merges; a new entity whose name embedding is within ``similarity``
(cosine) of an entity of the same family - earlier in the batch or in the graph's
``entity_embedding`` index - and whose name passes a lexical guard
(:func:`~kag_neo4j.builder.names.similar_names`) is merged into it, its name kept as an alias.
What the graph holds is asked through an :class:`EntityLookup`
(:class:`~kag_neo4j.builder.graph_lookup.GraphLookup` over Neo4j).

Documents are resolved one after the other against what precedes them, so the result does not
depend on how documents are cut into batches (a resumed load ends where an uninterrupted one does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kag_neo4j.builder.aligned_document import ENTITY, AlignedDocument, EntityNode, entity_id
from kag_neo4j.builder.names import name_key, similar_names
from kag_neo4j.builder.tally import Tally
from kag_neo4j.builder.type_resolution import VALUE_FAMILY


class EntityLookup(Protocol):
    """What the resolver asks the graph (implemented over Neo4j by
    :class:`~kag_neo4j.builder.graph_lookup.GraphLookup`)."""

    def existing(self, ids: Sequence[str]) -> set[str]: ...

    def by_alias(self, rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]: ...

    def similar(self, rows: Sequence[dict[str, Any]], *, min_cosine: float, k: int) -> dict[str, list[dict[str, Any]]]: ...


class NoLookup:
    """An empty graph (tests, dry runs)."""

    def existing(self, ids: Sequence[str]) -> set[str]:
        return set()

    def by_alias(self, rows: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
        return {}

    def similar(self, rows: Sequence[dict[str, Any]], *, min_cosine: float, k: int) -> dict[str, list[dict[str, Any]]]:
        return {}


#: type names of people: only their bare surnames may join full names ("Puzo" -> "Mario Puzo")
PERSON_TYPES = frozenset({"person", "people", "human", "per", "character", "人物", "人"})


def _person_like(semantic_type: str | None) -> bool:
    return semantic_type is not None and semantic_type.casefold() in PERSON_TYPES


def _same_kind(a: str | None, b: str | None) -> bool:
    """Semantic types (NER labels, off-schema types) do not contradict each other."""
    return a is None or b is None or a.casefold() == b.casefold()


class _FamilyVectors:
    """Unit vectors of the entities made earlier in a batch, per type family (numpy, growing)."""

    def __init__(self) -> None:
        self._ids: dict[str, list[str]] = {}
        self._rows: dict[str, np.ndarray] = {}

    def add(self, family: str, node_id: str, vector: Sequence[float]) -> None:
        unit = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(unit))
        if norm == 0.0:
            return
        ids = self._ids.setdefault(family, [])
        matrix = self._rows.get(family)
        if matrix is None:
            matrix = self._rows[family] = np.zeros((64, unit.shape[0]), dtype=np.float32)
        elif len(ids) == matrix.shape[0]:
            matrix = self._rows[family] = np.vstack([matrix, np.zeros_like(matrix)])
        matrix[len(ids)] = unit / norm
        ids.append(node_id)

    def above(self, family: str, vector: Sequence[float], threshold: float) -> list[tuple[float, str]]:
        """(cosine, id) of the family's vectors with cosine >= threshold, best first."""
        ids = self._ids.get(family)
        if not ids:
            return []
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        scores = self._rows[family][: len(ids)] @ (query / norm)
        hits = np.nonzero(scores >= threshold - 1e-6)[0]
        return sorted(((float(scores[i]), ids[i]) for i in hits), key=lambda hit: (-hit[0], hit[1]))


@dataclass
class ResolutionStats(Tally):
    """What resolution did with a batch (a load adds them up)."""

    #: extracted entity records (one per chunk and entity)
    entity_records: int = 0
    new_entities: int = 0
    #: records folded into an entity made by another record (same name, alias or embedding)
    merged: int = 0
    #: new names merged into an entity with another name through an alias
    alias_merges: int = 0
    #: new names merged into an entity with another name by embedding similarity
    similarity_merges: int = 0


def _alias_keys(doc: AlignedDocument) -> dict[str, set[str]]:
    """entity id -> the name keys of its other surface forms and aliases in ``doc``."""
    keys: dict[str, set[str]] = {}
    for mention in doc.mentions:
        if mention.kind != ENTITY:
            continue
        own = doc.entities[mention.node_id].key
        bucket = keys.setdefault(mention.node_id, set())
        bucket.update(k for k in (name_key(n) for n in mention.names) if k and k != own)
    return keys


class Resolver:
    """Resolves a batch of aligned documents against each other and the graph (module docs).

    For a new entity (its id is neither in the graph nor made earlier in the batch), in order:
    an alias of it is the key of a known entity of the same family; it is an alias of a known
    entity; its name vector is within ``similarity`` of a known entity's (and the names pass
    :func:`~kag_neo4j.builder.names.similar_names`). ``embed`` turns names into vectors; without
    it, or with ``similarity=None``, there are no embedding merges.
    """

    def __init__(
        self,
        lookup: EntityLookup | None = None,
        embed: Callable[[Sequence[str]], list[list[float]]] | None = None,
        *,
        similarity: float | None = 0.92,
        neighbours: int = 5,
    ) -> None:
        if similarity is not None and not 0.0 < similarity <= 1.0:
            raise ValueError(f"similarity must be in (0, 1], got {similarity}")
        self.lookup = lookup or NoLookup()
        self.embed = embed
        self.similarity = similarity
        self.neighbours = neighbours
        self.stats = ResolutionStats()

    def resolve(self, documents: Sequence[AlignedDocument]) -> ResolutionStats:
        stats = ResolutionStats()
        first_node: dict[str, EntityNode] = {}
        aliases: dict[str, set[str]] = {}
        per_doc_aliases = []
        for doc in documents:
            doc_aliases = _alias_keys(doc)
            per_doc_aliases.append(doc_aliases)
            for node_id, node in doc.entities.items():
                first_node.setdefault(node_id, node)
                aliases.setdefault(node_id, set()).update(doc_aliases.get(node_id, ()))
        all_ids = sorted(first_node)
        alias_ids = {entity_id(first_node[i].family, k) for i in all_ids for k in aliases.get(i, ())}
        in_graph = self.lookup.existing(sorted(set(all_ids) | alias_ids)) if all_ids else set()
        new_ids = [i for i in all_ids if i not in in_graph]
        # typed structured records are identified by their record id: never merged by name or vector
        mergeable = [i for i in new_ids if first_node[i].record_id is None]
        alias_rows = [{"id": i, "key": first_node[i].key, "family": first_node[i].family} for i in mergeable
                      if first_node[i].family != VALUE_FAMILY]
        graph_aliases = self.lookup.by_alias(alias_rows) if alias_rows else {}
        vectors: dict[str, list[float]] = {}
        graph_similar: dict[str, list[dict[str, Any]]] = {}
        if self.embed is not None and self.similarity is not None and new_ids:
            vectors = dict(zip(new_ids, self.embed([first_node[i].name for i in new_ids])))
            rows = [{"id": i, "vector": vectors[i], "family": first_node[i].family} for i in mergeable
                    if first_node[i].family != VALUE_FAMILY]
            graph_similar = self.lookup.similar(rows, min_cosine=self.similarity, k=self.neighbours) if rows else {}
        known: dict[str, EntityNode] = {}  # made earlier in this batch
        # "<family>:<alias key>" -> ids of entities that earlier documents of this batch gave that alias
        # (the graph's alias_text index does not show them yet)
        known_alias: dict[str, set[str]] = {}
        by_family = _FamilyVectors()
        for doc, doc_aliases in zip(documents, per_doc_aliases):
            stats.entity_records += doc.entity_records
            doc_new = 0
            for node_id in sorted(doc.entities):
                found = doc.entities.get(node_id)
                if found is None:  # merged away earlier in this loop
                    continue
                node = found
                if node_id in in_graph:
                    node.existing = True
                    continue
                if node_id in known:
                    continue
                own_aliases = sorted(doc_aliases.get(node_id, ()))
                target = None
                if node.record_id is None:
                    target = self._by_alias(node, own_aliases, in_graph, known, known_alias,
                                            graph_aliases.get(node_id, []))
                if target is not None:
                    stats.alias_merges += 1
                elif node.record_id is None:
                    target = self._similar(node, vectors.get(node_id), known, by_family, graph_similar.get(node_id, []))
                    if target is not None:
                        stats.similarity_merges += 1
                if target is not None:
                    doc.remap_entity(node_id, target)
                    continue
                node.embedding = vectors.get(node_id)
                known[node_id] = node
                if node.embedding is not None:
                    by_family.add(node.family, node_id, node.embedding)
                doc_new += 1
            for node_id, keys in _alias_keys(doc).items():  # what the writer will store as aliases
                family = doc.entities[node_id].family
                for key in keys:
                    known_alias.setdefault(entity_id(family, key), set()).add(node_id)
            stats.new_entities += doc_new
            doc.merges = max(0, doc.entity_records - doc_new)
            stats.merged += doc.merges
        self.stats.add(stats)
        return stats

    @staticmethod
    def _merged_into(node: EntityNode, target_id: str, target: EntityNode | None, key: str) -> EntityNode:
        """The node ``node`` becomes when it merges into ``target_id``."""
        if target is None:  # an entity in the graph
            return EntityNode(id=target_id, name=node.name, key=key, family=node.family, labels=node.labels,
                              semantic_type=node.semantic_type, description=node.description,
                              properties=dict(node.properties), existing=True)
        return EntityNode(id=target.id, name=target.name, key=target.key, family=target.family,
                          labels=tuple(sorted(set(target.labels) | set(node.labels))),
                          semantic_type=target.semantic_type or node.semantic_type,
                          description=target.description or node.description,
                          properties={**node.properties, **target.properties}, embedding=target.embedding)

    def _by_alias(
        self, node: EntityNode, own_aliases: list[str], in_graph: set[str], known: dict[str, EntityNode],
        known_alias: dict[str, set[str]], graph: list[dict[str, Any]],
    ) -> EntityNode | None:
        if node.family == VALUE_FAMILY:
            return None
        for key in own_aliases:  # one of its aliases is a known entity's name
            candidate = entity_id(node.family, key)
            if candidate in known:
                return self._merged_into(node, candidate, known[candidate], key)
            if candidate in in_graph:
                return self._merged_into(node, candidate, None, key)
        # it is an alias of an entity: one given that alias earlier in this batch, or one in the graph
        owners = {i for i in known_alias.get(node.id, ()) if i != node.id}
        keys: dict[str, str] = {}
        for match in graph:
            if match.get("family") == node.family and any(name_key(a) == node.key for a in match.get("aliases") or []):
                owners.add(match["match"])
                keys[match["match"]] = match["key"]
        if not owners:
            return None
        owner = min(owners)
        if owner in known:
            return self._merged_into(node, owner, known[owner], known[owner].key)
        return self._merged_into(node, owner, None, keys.get(owner) or owner.split(":", 1)[-1])

    def _similar(
        self, node: EntityNode, vector: list[float] | None, known: dict[str, EntityNode],
        by_family: _FamilyVectors, graph: list[dict[str, Any]],
    ) -> EntityNode | None:
        """The one known entity ``node`` is an embedding-near variant of; ``None`` when there is
        none, or more than one (an ambiguous name such as a bare surname stays apart)."""
        if vector is None or self.similarity is None or node.family == VALUE_FAMILY:
            return None
        candidates: dict[str, tuple[EntityNode | None, str]] = {}
        for _score, other_id in by_family.above(node.family, vector, self.similarity):
            other = known[other_id]
            if self._variant(node, other.key, other.semantic_type):
                candidates[other_id] = (other, other.key)
        for match in graph:
            key = str(match.get("key") or "")
            if match.get("family") == node.family and float(match["cosine"]) >= self.similarity \
                    and self._variant(node, key, match.get("semantic_type")):
                candidates.setdefault(str(match["match"]), (None, key))
        if len(candidates) != 1:
            return None
        [(target_id, (target, key))] = candidates.items()
        return self._merged_into(node, target_id, target, key)

    def _variant(self, node: EntityNode, key: str, semantic_type: str | None) -> bool:
        if not _same_kind(node.semantic_type, semantic_type):
            return False
        # a bare surname may join a full name only where names are known to be people's
        tails = _person_like(node.semantic_type or semantic_type) or node.family.casefold() in PERSON_TYPES
        return similar_names(node.key, key, tails=tails)
