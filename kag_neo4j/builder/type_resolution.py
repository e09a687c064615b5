"""Schema type resolution: raw extracted type names -> schema types, labels and type families.

A schema type's *family* is its root ancestor (``City -> GeographicLocation``), so sub- and
super-types of one family merge in alignment while ``Person`` and ``Location`` never do. A
generic type word (``Entity``, ``Thing``, ``实体``) says "no particular type"; NER value types
(dates, numbers) form their own family. :class:`TypeResolver` also names the schema relation or
literal property a predicate means, and :func:`relationship_type` says whether a name may be a
relationship type at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.schema.models import ResolvedRelation, ResolvedSchema, ResolvedType, TypeKind
from kag_neo4j.store.identifiers import check_identifier, is_reserved_relationship_type

#: type names that say "no particular type"; such records take the type their name has elsewhere
GENERIC_TYPES = frozenset({"", "entity", "entities", "thing", "other", "others", "unknown", "misc", "none", "concept",
                           "keyword", "object", "item", "term", "名词", "实体", "其他", "概念"})
#: NER value types; without a schema they form their own family, so "1990" the date and a
#: thing called "1990" do not merge, and dates never merge with names by embedding
VALUE_TYPES = frozenset({"date", "time", "year", "cardinal", "ordinal", "quantity", "money", "percent", "number",
                         "duration", "日期", "时间", "数字"})
GENERIC_FAMILY = "entity"
VALUE_FAMILY = "value"
EVENT_FAMILY = "event"


@dataclass(frozen=True, slots=True)
class TypeInfo:
    """What a raw extracted type resolves to."""

    family: str
    labels: tuple[str, ...] = ()
    raw: str | None = None
    schema_type: ResolvedType | None = None
    generic: bool = False
    off_schema: bool = False


class TypeResolver:
    """Maps raw extracted types to schema types, labels and families (see module docs)."""

    def __init__(self, schema: ResolvedSchema | None = None) -> None:
        self.schema = schema
        self._by_name: dict[str, ResolvedType] = {}
        self._cache: dict[tuple[str | None, bool], TypeInfo] = {}
        self._by_label: dict[str, ResolvedType] = {}
        if schema is not None:
            self._by_label = {t.label: t for t in schema.types}
            for spg_type in schema.types:
                if spg_type.kind in (TypeKind.INDEX, TypeKind.STANDARD):
                    continue
                self._by_name.setdefault(spg_type.name.casefold(), spg_type)
            for spg_type in schema.types:  # display names (e.g. Chinese) after the real names
                if spg_type.display_name and spg_type.kind not in (TypeKind.INDEX, TypeKind.STANDARD):
                    self._by_name.setdefault(spg_type.display_name.strip().casefold(), spg_type)

    def schema_type(self, raw: str | None) -> ResolvedType | None:
        return self._by_name.get((raw or "").strip().casefold())

    def by_label(self, label: str) -> ResolvedType | None:
        return self._by_label.get(label)

    def resolve(self, raw: str | None, *, event: bool = False) -> TypeInfo:
        cached = self._cache.get((raw, event))
        if cached is not None:
            return cached
        info = self._resolve(raw, event=event)
        self._cache[(raw, event)] = info
        return info

    def _resolve(self, raw: str | None, *, event: bool) -> TypeInfo:
        text = (raw or "").strip()
        spg_type = self.schema_type(text)
        if spg_type is not None:
            root = spg_type.ancestors[-1] if spg_type.ancestors else spg_type.name
            generic = text.casefold() in GENERIC_TYPES
            family = (EVENT_FAMILY if event else GENERIC_FAMILY) if generic else root
            return TypeInfo(family=family, labels=spg_type.labels, raw=text, schema_type=spg_type, generic=generic)
        folded = text.casefold()
        if event:
            return TypeInfo(family=EVENT_FAMILY, raw=text or None, generic=True,
                            off_schema=self.schema is not None and bool(text) and folded != "event")
        if folded in VALUE_TYPES:
            return TypeInfo(family=VALUE_FAMILY, raw=text, off_schema=self.schema is not None)
        return TypeInfo(family=GENERIC_FAMILY, raw=text or None, generic=True,
                        off_schema=self.schema is not None and folded not in GENERIC_TYPES)

    def relation(self, subject: ResolvedType | None, predicate: str, target: ResolvedType | None) -> ResolvedRelation | None:
        """The schema relation ``subject -[predicate]-> target`` names, if the types fit."""
        if subject is None:
            return None
        wanted = predicate.strip().casefold()
        for relation in subject.relations:
            names = {relation.name.casefold()}
            if relation.display_name:
                names.add(relation.display_name.strip().casefold())
            if wanted not in names:
                continue
            if target is None or relation.target == target.name or relation.target in target.ancestors:
                return relation
        return None

    def literal_property(self, subject: ResolvedType | None, predicate: str) -> str | None:
        """The literal property of ``subject``'s type that ``predicate`` names, if any."""
        if subject is None:
            return None
        wanted = predicate.strip().casefold()
        for prop in subject.properties:
            if wanted in {prop.name.casefold(), (prop.display_name or "").strip().casefold()}:
                return prop.name
        return None


def relationship_type(name: str) -> str | None:
    """``name`` as a relationship type the writer may use, or ``None`` (then it is an open fact)."""
    try:
        check_identifier(name, what="relationship type")
    except InvalidIdentifierError:
        return None
    return None if is_reserved_relationship_type(name) else name

