"""The narrow view of an SPG schema that extraction needs: type names, kinds, properties and
relations with their ranges, looked up by name, by display name or case-insensitively.

:func:`schema_view` is the one adapter from :class:`kag_neo4j.schema.ResolvedSchema`; nothing
else in the builder's input half reads the schema models.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Literal

from kag_neo4j.builder.normalise import name_key
from kag_neo4j.schema.constraints import required

from kag_neo4j.schema.models import ResolvedProperty

if TYPE_CHECKING:
    from kag_neo4j.schema.models import ResolvedSchema

Kind = Literal["entity", "concept", "event", "standard", "index"]

_KINDS: dict[str, Kind] = {
    "EntityType": "entity",
    "ConceptType": "concept",
    "EventType": "event",
    "StandardType": "standard",
    "IndexType": "index",
}


def _compact(name: str) -> str:
    return name_key(name).replace(" ", "")


@dataclass(frozen=True)
class RelationInfo:
    name: str
    target: str
    display_name: str | None = None
    multi_value: bool = False
    #: edge properties: name -> declaration (``fundTrans.transAmt``: Integer), checked on write
    properties: dict[str, ResolvedProperty] = field(default_factory=dict)


@dataclass(frozen=True)
class TypeInfo:
    name: str
    kind: Kind
    display_name: str | None = None
    description: str | None = None
    ancestors: tuple[str, ...] = ()
    #: literal properties: name -> declaration (value type, constraints; rule-derived properties left out)
    properties: dict[str, ResolvedProperty] = field(default_factory=dict)
    property_display: dict[str, str] = field(default_factory=dict)
    relations: dict[str, RelationInfo] = field(default_factory=dict)
    #: ``NotNull`` literal properties (:func:`kag_neo4j.schema.constraints.required`)
    required: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchemaView:
    namespace: str
    types: dict[str, TypeInfo]

    # ------------------------------------------------------------------ lookups
    @cached_property
    def _type_index(self) -> dict[str, str]:
        index: dict[str, str] = {}
        for info in self.types.values():
            for label in (info.name, info.display_name):
                if label:
                    index.setdefault(_compact(label), info.name)
        return index

    def resolve_type(self, name: str | None, *, kinds: Iterable[Kind] | None = None) -> str | None:
        """The schema type ``name`` denotes (exact, display name or case-insensitive), else None."""
        if not name:
            return None
        allowed = set(kinds) if kinds is not None else None
        candidate = name if name in self.types else self._type_index.get(_compact(name))
        if candidate is None:
            return None
        if allowed is not None and self.types[candidate].kind not in allowed:
            return None
        return candidate

    def is_a(self, type_name: str | None, target: str) -> bool:
        """Whether ``type_name`` is ``target`` or inherits from it."""
        if type_name is None:
            return False
        info = self.types.get(type_name)
        return type_name == target or (info is not None and target in info.ancestors)

    @staticmethod
    def _match(name: str, options: dict[str, str | None]) -> str | None:
        if name in options:
            return name
        key = _compact(name)
        for canonical, display in options.items():
            if _compact(canonical) == key or (display and _compact(display) == key):
                return canonical
        return None

    def resolve_relation(self, type_name: str, predicate: str) -> RelationInfo | None:
        info = self.types.get(type_name)
        if info is None:
            return None
        found = self._match(predicate, {name: rel.display_name for name, rel in info.relations.items()})
        return info.relations[found] if found else None

    def resolve_property(self, type_name: str, key: str) -> str | None:
        info = self.types.get(type_name)
        if info is None:
            return None
        return self._match(key, {name: info.property_display.get(name) for name in info.properties})

    def kind(self, type_name: str | None) -> Kind | None:
        """The kind of schema type ``type_name`` (entity, concept, event...), None when unknown."""
        info = self.types.get(type_name) if type_name else None
        return info.kind if info is not None else None

    def relation_anywhere(self, predicate: str) -> list[str]:
        """Types that declare a relation called ``predicate``."""
        return [name for name in self.types if self.resolve_relation(name, predicate) is not None]

    # ------------------------------------------------------------------ prompt listing
    def listing(self, *, limit: int = 60) -> str:
        """A compact listing for prompts, one line per type:
        ``Person(人物) [entity]: props birthDate, age; rels worksFor(任职于)->Company`` (a display name
        lets a model writing in that language use the relation). Relations that
        most types share (KAG's ``semanticType``, ``synonyms``...) are listed once at the end."""
        listed = [info for info in self.types.values() if info.kind in ("entity", "concept", "event")][:limit]
        shared: dict[str, str] = {}
        if len(listed) > 3:
            targets: dict[str, set[str]] = {}
            counts: dict[str, int] = {}
            for info in listed:
                for name, rel in info.relations.items():
                    counts[name] = counts.get(name, 0) + 1
                    targets.setdefault(name, set()).add("(same type)" if rel.target == info.name else rel.target)
            for name, count in counts.items():
                if count >= 0.75 * len(listed) and len(targets[name]) == 1:
                    shared[name] = next(iter(targets[name]))
        lines = []
        for info in listed:
            head = info.name + (f"({info.display_name})" if info.display_name else "") + f" [{info.kind}]"
            parts = []
            props = [name for name in info.properties if name not in ("desc", "description", "name")]
            if props:
                parts.append("props " + ", ".join(props))
            rels = [f"{name}" + (f"({rel.display_name})" if rel.display_name else "") + f"->{rel.target}"
                    for name, rel in info.relations.items() if name not in shared]
            if rels:
                parts.append("rels " + ", ".join(rels))
            lines.append(head + (": " + "; ".join(parts) if parts else ""))
        if shared:
            lines.append("most types: rels " + ", ".join(f"{name}->{target}" for name, target in shared.items()))
        return "\n".join(lines)


def schema_view(schema: ResolvedSchema | SchemaView) -> SchemaView:
    """Adapt a resolved SPG schema (a view passes through unchanged)."""
    if isinstance(schema, SchemaView):
        return schema
    types: dict[str, TypeInfo] = {}
    for spg_type in schema.types:
        properties = {p.name: p for p in spg_type.properties if not p.rule}
        property_display = {p.name: p.display_name for p in spg_type.properties if p.display_name and not p.rule}
        relations = {
            rel.name: RelationInfo(
                name=rel.name,
                target=rel.target,
                display_name=rel.display_name,
                multi_value=rel.constraints.multi_value,
                properties={p.name: p for p in rel.properties},
            )
            for rel in spg_type.relations
            if not rel.rule
        }
        types[spg_type.name] = TypeInfo(
            name=spg_type.name,
            kind=_KINDS.get(spg_type.kind.value, "entity"),
            display_name=spg_type.display_name,
            description=spg_type.description,
            ancestors=tuple(spg_type.ancestors),
            properties=properties,
            property_display=property_display,
            relations=relations,
            required=required(spg_type),
        )
    return SchemaView(namespace=schema.namespace, types=types)
