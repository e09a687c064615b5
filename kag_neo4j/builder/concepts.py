"""Domain knowledge: a concept taxonomy loaded into the graph and used by extraction and linking.

The input is KAG's ``domain_kg`` demo format: a folder with ``nodes.json``
(``[{"id", "name", "label", "properties"?}]``) and ``edges.json``
(``[{"id"?, "from", "fromType", "to", "toType", "label", "properties"?}]``), where edge labels
are concept relations such as ``isA``. Nodes may repeat (the demo lists some ids many times);
repeats are merged.

What the taxonomy does in a load:

* it is written as ``(:Concept {id, name, aliases, description, source: 'taxonomy'})`` nodes
  with ``IS_A`` / ``PART_OF`` / ``CONTAINS`` / ``SYNONYM`` / ``CAUSES`` edges between them;
* extraction: :meth:`Taxonomy.find_mentions` finds concept names in chunk text (longest match
  first), and :func:`inject_mentions` adds them to the chunk's extraction as entities, so a
  domain term is indexed even where the extractor missed it;
* linking: an entity whose name (or alias) is a concept name gets
  ``(:Entity)-[:BELONGS_TO]->(:Concept)`` (see :mod:`kag_neo4j.builder.alignment`).

A concept's id is ``concept:<name key>`` (see :func:`concept_id`), so a concept made from an
entity's semantic type and the same concept from a taxonomy are one node.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from kag_neo4j.builder.names import name_key
from kag_neo4j.builder.records import ChunkExtraction, ExtractedEntity
from kag_neo4j.errors import TaxonomyError

#: concept relation labels accepted in edges.json, and the relationship type each becomes
CONCEPT_RELATIONS: dict[str, str] = {
    "isa": "IS_A", "is_a": "IS_A", "subclassof": "IS_A", "hypernym": "IS_A", "belongto": "IS_A",
    "partof": "PART_OF", "part_of": "PART_OF", "locateat": "PART_OF",
    "contains": "CONTAINS", "haspart": "CONTAINS",
    "synonym": "SYNONYM", "sameas": "SYNONYM", "alias": "SYNONYM",
    "causes": "CAUSES", "cause": "CAUSES", "leadto": "CAUSES",
}
#: the shortest concept name looked for in text (single letters would match everywhere)
MIN_MENTION_LENGTH = 2


def concept_id(name: str) -> str:
    """The id of the concept called ``name``."""
    key = name_key(name)
    if not key:
        raise TaxonomyError(f"concept name {name!r} has no letters or digits; give it a real name")
    return f"concept:{key}"


class Concept(BaseModel):
    id: str
    name: str
    label: str = "Concept"
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    #: the ids the node had in the source file (one concept may come from several)
    source_ids: list[str] = Field(default_factory=list)


class ConceptEdge(BaseModel):
    source: str
    target: str
    rel_type: str
    label: str


class Taxonomy(BaseModel):
    """A loaded concept taxonomy; build one with :func:`load_taxonomy` or :meth:`from_records`."""

    source: str = ""
    #: the concepts' labels are schema ConceptTypes (concept tables): written as node labels too
    typed: bool = False
    concepts: dict[str, Concept] = Field(default_factory=dict)
    edges: list[ConceptEdge] = Field(default_factory=list)
    _aliases: dict[str, Concept] | None = PrivateAttr(default=None)
    _compiled: tuple[re.Pattern[str] | None] | None = PrivateAttr(default=None)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_records(
        cls, nodes: Iterable[dict[str, Any]], edges: Iterable[dict[str, Any]], *, source: str = "<records>",
        typed: bool = False,
    ) -> Taxonomy:
        taxonomy = cls(source=source, typed=typed)
        by_raw_id: dict[str, str] = {}
        for index, node in enumerate(nodes):
            if not isinstance(node, dict):
                raise TaxonomyError(f"{source}: node {index} is not an object; expected {{\"id\", \"name\", \"label\"}}")
            raw_id = str(node.get("id") or node.get("name") or "").strip()
            name = str(node.get("name") or node.get("id") or "").strip()
            if not name:
                raise TaxonomyError(f"{source}: node {index} has neither 'name' nor 'id'; give every node a name")
            concept = taxonomy._add(name, raw_id, str(node.get("label") or "Concept"), node.get("properties") or {})
            by_raw_id[raw_id] = concept.id
        seen: set[tuple[str, str, str]] = set()
        for index, edge in enumerate(edges):
            if not isinstance(edge, dict):
                raise TaxonomyError(f"{source}: edge {index} is not an object; expected {{\"from\", \"to\", \"label\"}}")
            label = str(edge.get("label") or "").strip()
            rel_type = CONCEPT_RELATIONS.get(label.replace(" ", "").casefold())
            if rel_type is None:
                allowed = ", ".join(sorted({"isA", "partOf", "contains", "synonym", "causes"}))
                raise TaxonomyError(
                    f"{source}: edge {index} has label {label!r}, which is not a concept relation; use one of {allowed}"
                )
            ends: list[str] = []
            for side in ("from", "to"):
                raw = str(edge.get(side) or "").strip()
                if not raw:
                    raise TaxonomyError(f"{source}: edge {index} has no {side!r}; name the {side} concept's id")
                ends.append(by_raw_id.get(raw) or taxonomy._add(raw, raw, str(edge.get(f"{side}Type") or "Concept"), {}).id)
            key = (ends[0], rel_type, ends[1])
            if ends[0] != ends[1] and key not in seen:
                seen.add(key)
                taxonomy.edges.append(ConceptEdge(source=ends[0], target=ends[1], rel_type=rel_type, label=label))
        return taxonomy

    def _add(self, name: str, raw_id: str, label: str, properties: dict[str, Any]) -> Concept:
        cid = concept_id(name)
        concept = self.concepts.get(cid)
        if concept is None:
            concept = self.concepts[cid] = Concept(id=cid, name=name, label=label)
        if raw_id and raw_id not in concept.source_ids:
            concept.source_ids.append(raw_id)
        description = properties.get("description") or properties.get("desc")
        if description and not concept.description:
            concept.description = str(description)
        for alias in properties.get("aliases") or []:
            if str(alias) not in concept.aliases and str(alias) != concept.name:
                concept.aliases.append(str(alias))
        return concept

    # ------------------------------------------------------------------ use
    def get(self, name: str) -> Concept | None:
        """The concept whose name or alias has the same name key as ``name``."""
        key = name_key(name)
        if not key:
            return None
        return self.concepts.get(f"concept:{key}") or self._alias_index().get(key)

    def _alias_index(self) -> dict[str, Concept]:
        if self._aliases is None:
            self._aliases = {name_key(a): c for c in self.concepts.values() for a in c.aliases if name_key(a)}
        return self._aliases

    def _pattern(self) -> re.Pattern[str] | None:
        if self._compiled is not None:
            return self._compiled[0]
        surfaces = {
            surface
            for concept in self.concepts.values()
            for surface in (concept.name, *concept.aliases)
            if len(surface) >= MIN_MENTION_LENGTH
        }
        parts = []
        for surface in sorted(surfaces, key=lambda s: (-len(s), s)):
            escaped = re.escape(surface)
            if surface[0].isascii() and surface[0].isalnum():
                escaped = r"(?<!\w)" + escaped
            if surface[-1].isascii() and surface[-1].isalnum():
                escaped += r"(?!\w)"
            parts.append(escaped)
        pattern = re.compile("|".join(parts), re.IGNORECASE) if parts else None
        self._compiled = (pattern,)
        return pattern

    def find_mentions(self, text: str) -> dict[str, tuple[Concept, list[str], int]]:
        """Concept names in ``text``: concept id -> (concept, surface forms, count)."""
        pattern = self._pattern()
        found: dict[str, tuple[Concept, list[str], int]] = {}
        if pattern is None or not text:
            return found
        for match in pattern.finditer(text):
            surface = match.group(0)
            concept = self.get(surface)
            if concept is None:
                continue
            have = found.get(concept.id)
            if have is None:
                found[concept.id] = (concept, [surface], 1)
            else:
                names = have[1] if surface in have[1] else [*have[1], surface]
                found[concept.id] = (concept, names, have[2] + 1)
        return found

    def rows(self) -> tuple[list[dict[str, Any]], dict[str, list[dict[str, str]]]]:
        """Concept rows and edge rows grouped by relationship type, for the writer."""
        concepts = [
            {"id": c.id, "name": c.name, "description": c.description, "aliases": c.aliases,
             "alias_text": " | ".join(c.aliases), "source_ids": c.source_ids}
            for c in self.concepts.values()
        ]
        edges: dict[str, list[dict[str, str]]] = {}
        for edge in self.edges:
            edges.setdefault(edge.rel_type, []).append({"source": edge.source, "target": edge.target, "label": edge.label})
        return concepts, edges


def _read_json_list(path: Path) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaxonomyError(f"taxonomy file {path} does not exist") from exc
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise TaxonomyError(f"taxonomy file {path} is not valid UTF-8 JSON ({exc}); fix or re-export it") from exc
    if not isinstance(data, list):
        raise TaxonomyError(f"taxonomy file {path} must hold a JSON list of objects, found {type(data).__name__}")
    return data


def load_taxonomy(path: str | Path) -> Taxonomy:
    """Load a domain_kg taxonomy: a folder with nodes.json and edges.json, or a nodes.json file
    (its edges.json is looked for next to it)."""
    path = Path(path)
    if path.is_dir():
        nodes_path, edges_path = path / "nodes.json", path / "edges.json"
    elif path.is_file():
        nodes_path, edges_path = path, path.with_name("edges.json")
    else:
        raise TaxonomyError(
            f"taxonomy {path} does not exist; pass a folder holding nodes.json and edges.json (the domain_kg format)"
        )
    if not nodes_path.is_file():
        raise TaxonomyError(f"taxonomy folder {path} has no nodes.json; the domain_kg format needs nodes.json + edges.json")
    edges = _read_json_list(edges_path) if edges_path.is_file() else []
    return Taxonomy.from_records(_read_json_list(nodes_path), edges, source=str(path))


def inject_mentions(extraction: ChunkExtraction, text: str, taxonomy: Taxonomy) -> ChunkExtraction:
    """Add the taxonomy's concepts found in ``text`` to ``extraction`` as entities (domain NER).

    A concept the extractor already found (same name key) is left alone; new ones are added
    with the concept's label as their type and one entity per occurrence count is not needed:
    the aligner counts occurrences itself. Returns a new extraction; the input is not changed.
    """
    found = taxonomy.find_mentions(text)
    if not found:
        return extraction
    have = {name_key(e.name) for e in extraction.entities}
    have.update(name_key(alias) for e in extraction.entities for alias in e.aliases)
    added = [
        ExtractedEntity(name=concept.name, type=concept.label, description=concept.description,
                        aliases=[s for s in surfaces if s != concept.name])
        for concept, surfaces, _count in found.values()
        if name_key(concept.name) not in have
    ]
    if not added:
        return extraction
    return extraction.model_copy(update={"entities": [*extraction.entities, *added]})
