"""Check a parsed schema and resolve it: inheritance, value types, labels, derived names.

Every problem is collected with its location and raised together as one
:class:`~kag_neo4j.schema.issues.SchemaFileError`. Display names (the Chinese names in
parentheses) are kept as display names only; labels come from the English names.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from pathlib import Path

from kag_neo4j.errors import InvalidIdentifierError
from kag_neo4j.schema import naming
from kag_neo4j.schema.issues import Location, SchemaFileError, SchemaIssue
from kag_neo4j.schema.models import (
    BASIC_TYPES,
    HYPERNYM_PREDICATES,
    STANDARD_PREFIX,
    PredicateDecl,
    ResolvedProperty,
    ResolvedRelation,
    ResolvedSchema,
    ResolvedType,
    SchemaDocument,
    TypeDecl,
    TypeKind,
)
from kag_neo4j.store.identifiers import check_identifier, is_reserved_relationship_type

_TEXT_TYPES = ("Text",)


class _Checker:
    def __init__(self, doc: SchemaDocument) -> None:
        self.doc = doc
        self.issues: list[SchemaIssue] = []
        self.warnings: list[str] = []
        self.decls: dict[str, TypeDecl] = {}
        self.resolved: dict[str, ResolvedType] = {}
        self._resolving: list[str] = []
        self._failed: set[str] = set()

    # ------------------------------------------------------------------ reporting
    def issue(self, location: Location | None, message: str) -> None:
        self.issues.append(SchemaIssue(location=location, message=message))

    def warn(self, location: Location | None, message: str) -> None:
        self.warnings.append(f"{location}: {message}" if location else message)

    def _suggest(self, name: str, candidates: Iterable[str]) -> str:
        close = difflib.get_close_matches(name, list(candidates), n=1)
        return f" (did you mean {close[0]!r}?)" if close else ""

    def _check_name(self, value: str, what: str, location: Location | None) -> bool:
        try:
            check_identifier(value, what=what)
        except InvalidIdentifierError as exc:
            self.issue(location, f"{exc}; shorten or rename it")
            return False
        return True

    # ------------------------------------------------------------------ types
    def collect(self) -> None:
        for decl in self.doc.types:
            first = self.decls.get(decl.name)
            if first is not None:
                line = first.location.line if first.location else "?"
                self.issue(decl.location, f"expected a new type name, found {decl.name!r} again "
                           f"(first declared on line {line}); rename one of them")
                continue
            self.decls[decl.name] = decl

    def resolve(self, name: str) -> ResolvedType | None:
        if name in self.resolved:
            return self.resolved[name]
        if name in self._failed:
            return None
        result = self._resolve(name)
        if result is None:
            self._failed.add(name)
        return result

    def _resolve(self, name: str) -> ResolvedType | None:
        decl = self.decls[name]
        if name in self._resolving:
            cycle = " -> ".join([*self._resolving[self._resolving.index(name) :], name])
            self.issue(decl.location, f"expected an acyclic inheritance chain, found the cycle {cycle}")
            return None
        parent: ResolvedType | None = None
        if decl.parent is not None:
            if decl.parent not in self.decls:
                hint = (f"; write '{name}: {decl.parent}' to declare a root type of that kind"
                        if decl.parent in TypeKind._value2member_map_ else
                        self._suggest(decl.parent, self.decls))
                self.issue(decl.parent_location, f"expected a declared parent type, found unknown type "
                           f"{decl.parent!r}{hint}")
                return None
            self._resolving.append(name)
            try:
                parent = self.resolve(decl.parent)
            finally:
                self._resolving.pop()
            if parent is None:
                return None
        kind = parent.kind if parent is not None else decl.kind
        assert kind is not None  # the parser guarantees a kind or a parent
        label = naming.label_for(name)
        if label != name:
            self.warn(decl.location, f"type {name!r} is stored under the label {label!r} because kag-neo4j uses "
                      f":{name} for its own nodes")
        for derived, what in ((lambda: naming.constraint_name(label), "constraint name"),
                              (lambda: naming.fulltext_index_name(label), "index name")):
            try:
                derived()
            except InvalidIdentifierError:
                self.issue(decl.location, f"type name {name!r} is too long to derive its {what}; "
                           "use at most 100 characters")
        hypernym = decl.hypernym_predicate
        if hypernym is not None:
            if kind is not TypeKind.CONCEPT:
                self.issue(decl.hypernym_location, f"expected hypernymPredicate only on a ConceptType, found it on "
                           f"{name!r} of kind {kind.value}; remove it")
            elif hypernym not in HYPERNYM_PREDICATES:
                self.issue(decl.hypernym_location, f"expected a hypernym predicate ({', '.join(HYPERNYM_PREDICATES)}), "
                           f"found {hypernym!r}")
        elif kind is TypeKind.CONCEPT and parent is None:
            hypernym = "isA"
        if parent is not None and hypernym is None:
            hypernym = parent.hypernym_predicate

        own_props, own_rels = self.predicates(decl, kind)
        inherited_props = tuple(p.model_copy(update={"inherited_from": p.inherited_from or parent.name})
                                for p in parent.properties) if parent else ()
        inherited_rels = tuple(r.model_copy(update={"inherited_from": r.inherited_from or parent.name, "source": name})
                               for r in parent.relations) if parent else ()
        inherited_names: dict[str, str | None] = {p.name: p.inherited_from for p in inherited_props}
        inherited_names.update({r.name: r.inherited_from for r in inherited_rels})
        own: list[tuple[str, Location | None]] = [(p.name, p.location) for p in own_props]
        own += [(r.name, r.location) for r in own_rels]
        for predicate_name, location in own:
            if predicate_name in inherited_names:
                self.issue(location, f"expected a new predicate name, found {predicate_name!r}, which "
                           f"{name!r} already inherits from {inherited_names[predicate_name]!r}; remove or rename it")
        if kind is TypeKind.EVENT and "subject" not in inherited_names and \
                not any(predicate_name == "subject" for predicate_name, _ in own):
            self.warn(decl.location, f"event type {name!r} declares no 'subject' (KAG expects one)")
        resolved = ResolvedType(
            name=name,
            label=label,
            labels=(label, *(parent.labels if parent else ())),
            kind=kind,
            display_name=decl.display_name,
            description=decl.description,
            parent=decl.parent,
            ancestors=((parent.name, *parent.ancestors) if parent else ()),
            hypernym_predicate=hypernym,
            properties=(*inherited_props, *own_props),
            relations=(*inherited_rels, *own_rels),
            extras=dict(decl.extras),
            location=decl.location,
        )
        self.resolved[name] = resolved
        return resolved

    # ------------------------------------------------------------------ predicates
    def predicates(self, decl: TypeDecl, kind: TypeKind) -> tuple[tuple[ResolvedProperty, ...],
                                                                  tuple[ResolvedRelation, ...]]:
        props: list[ResolvedProperty] = []
        rels: list[ResolvedRelation] = []
        seen: dict[str, int] = {}
        declared = [("properties", p) for p in decl.properties] + [("relations", r) for r in decl.relations]
        for section, predicate in declared:
            if predicate.name == "id":
                self.issue(predicate.location, "expected a predicate name other than 'id', the built-in key of every "
                           "type; remove it")
                continue
            if predicate.name in seen:
                self.issue(predicate.location, f"expected a new predicate name in type {decl.name!r}, found "
                           f"{predicate.name!r} again (first on line {seen[predicate.name]}); rename one")
                continue
            seen[predicate.name] = predicate.location.line if predicate.location else 0
            if self._is_literal(predicate.value_type):
                if section == "relations":
                    self.issue(predicate.value_type_location, f"expected a type as the target of relation "
                               f"{predicate.name!r}, found the literal type {predicate.value_type!r}; declare literal "
                               "values under 'properties:'")
                    continue
                if predicate.semantic is not None:
                    self.issue(predicate.location, f"expected a type as the target of the semantic predicate "
                               f"{predicate.semantic.value}#{predicate.name}, found {predicate.value_type!r}")
                    continue
                prop = self.literal(predicate, nested=False)
                if prop is not None:
                    props.append(prop)
            elif predicate.value_type in self.decls:
                rel = self.relation(decl.name, section, predicate)
                if rel is not None:
                    rels.append(rel)
            else:
                self.unknown_type(predicate)
        return tuple(props), tuple(rels)

    @staticmethod
    def _is_literal(value_type: str) -> bool:
        return value_type in BASIC_TYPES or value_type.startswith(STANDARD_PREFIX)

    def unknown_type(self, predicate: PredicateDecl) -> None:
        hint = self._suggest(predicate.value_type, [*BASIC_TYPES, *self.decls])
        self.issue(predicate.value_type_location, f"expected Text, Integer, Float, STD.<Name> or a declared type, "
                   f"found unknown type {predicate.value_type!r}{hint}")

    def literal(self, predicate: PredicateDecl, *, nested: bool) -> ResolvedProperty | None:
        ok = True
        textual = predicate.value_type in _TEXT_TYPES or predicate.value_type.startswith(STANDARD_PREFIX)
        regular = predicate.constraints.regular
        if regular is not None:
            if not textual:
                ok = False
                self.issue(predicate.location, f"expected Regular only on Text properties, found it on "
                           f"{predicate.name!r} of type {predicate.value_type}")
            else:
                try:
                    re.compile(regular)
                except re.error as exc:
                    ok = False
                    self.issue(predicate.location, f"expected a valid regular expression in Regular, found "
                               f"{regular!r} ({exc})")
        vector_prop: str | None = None
        if predicate.index is not None:
            if nested:
                ok = False
                self.issue(predicate.location, f"expected index only on type properties, found it on the sub-property "
                           f"{predicate.name!r}; remove it")
            elif not textual:
                ok = False
                self.issue(predicate.location, f"expected index only on Text properties, found it on "
                           f"{predicate.name!r} of type {predicate.value_type}")
            elif predicate.index.vector:
                vector_prop = predicate.name + naming.VECTOR_SUFFIX
                ok = self._check_name(vector_prop, "vector property name", predicate.location) and ok
        subs = self.sub_properties(predicate)
        if not ok or subs is None:
            return None
        return ResolvedProperty(
            name=predicate.name,
            display_name=predicate.display_name,
            description=predicate.description,
            value_type=predicate.value_type,
            constraints=predicate.constraints,
            index=predicate.index,
            vector_property=vector_prop,
            rule=predicate.rule,
            properties=subs,
            location=predicate.location,
        )

    def sub_properties(self, predicate: PredicateDecl) -> tuple[ResolvedProperty, ...] | None:
        subs: list[ResolvedProperty] = []
        seen: set[str] = set()
        ok = True
        for sub in predicate.properties:
            if sub.name in seen:
                ok = False
                self.issue(sub.location, f"expected a new sub-property name under {predicate.name!r}, found "
                           f"{sub.name!r} again")
                continue
            seen.add(sub.name)
            if not self._is_literal(sub.value_type):
                ok = False
                known = sub.value_type in self.decls
                self.issue(sub.value_type_location, "expected Text, Integer, Float or STD.<Name> as a sub-property "
                           f"type, found {'the type' if known else 'unknown type'} {sub.value_type!r}"
                           + ("; edges cannot point from edges" if known else ""))
                continue
            resolved = self.literal(sub, nested=True)
            if resolved is None:
                ok = False
            else:
                subs.append(resolved)
        return tuple(subs) if ok else None

    def relation(self, source: str, section: str, predicate: PredicateDecl) -> ResolvedRelation | None:
        ok = True
        if is_reserved_relationship_type(predicate.name):
            ok = False
            self.issue(predicate.location, f"expected a predicate name not used by kag-neo4j itself, found "
                       f"{predicate.name!r}; rename it")
        constraints = predicate.constraints
        if constraints.enum is not None or constraints.regular is not None:
            ok = False
            self.issue(predicate.location, f"expected only NotNull and MultiValue on {predicate.name!r}, which points "
                       f"to the type {predicate.value_type!r}; Enum and Regular apply to Text values")
        if predicate.index is not None:
            ok = False
            self.issue(predicate.location, f"expected index only on Text properties, found it on {predicate.name!r}, "
                       f"which points to the type {predicate.value_type!r}")
        subs = self.sub_properties(predicate)
        if not ok or subs is None:
            return None
        return ResolvedRelation(
            name=predicate.name,
            source=source,
            target=predicate.value_type,
            semantic=predicate.semantic,
            declared_in="properties" if section == "properties" else "relations",
            display_name=predicate.display_name,
            description=predicate.description,
            constraints=constraints,
            rule=predicate.rule,
            properties=subs,
            location=predicate.location,
        )

    # ------------------------------------------------------------------ labels
    def check_labels(self, types: list[ResolvedType]) -> None:
        owners: dict[str, str] = {}
        for spg_type in types:
            other = owners.setdefault(spg_type.label, spg_type.name)
            if other != spg_type.name:
                self.issue(spg_type.location, f"expected distinct labels, found {spg_type.name!r} and {other!r} both "
                           f"stored as :{spg_type.label}; rename one")
            for prop in spg_type.own_properties:
                if prop.vector_property:
                    try:
                        naming.vector_index_name(spg_type.label, prop.name)
                    except InvalidIdentifierError:
                        self.issue(prop.location, f"names {spg_type.name!r} and {prop.name!r} are too long to derive "
                                   "a vector index name; shorten them")


def validate_schema(doc: SchemaDocument, *, namespace: str | None = None) -> ResolvedSchema:
    """Validate ``doc`` and resolve it; raise :class:`SchemaFileError` listing every problem.

    ``namespace`` overrides the namespace of the file (and fills in ``{{namespace}}``).
    """
    checker = _Checker(doc)
    name = namespace if namespace is not None else doc.namespace
    if name is None:
        checker.issue(doc.namespace_location, "expected a namespace name, found the template placeholder "
                      "{{namespace}}; pass a namespace (--namespace NAME)")
    else:
        checker._check_name(name, "namespace", doc.namespace_location)
    checker.collect()
    for type_name in checker.decls:
        checker.resolve(type_name)
    ordered = [checker.resolved[decl.name] for decl in doc.types
               if decl.name in checker.resolved and checker.decls.get(decl.name) is decl]
    checker.check_labels(ordered)
    if checker.issues:
        checker.issues.sort(key=lambda i: (i.location.line, i.location.column) if i.location else (0, 0))
        raise SchemaFileError(checker.issues)
    assert name is not None
    return ResolvedSchema(namespace=name, source=doc.source, types=tuple(ordered), warnings=tuple(checker.warnings))


def load_schema(path: str | Path, *, namespace: str | None = None) -> ResolvedSchema:
    """Parse and validate a ``.schema`` file."""
    from kag_neo4j.schema.parser import parse_file

    return validate_schema(parse_file(path, namespace=namespace), namespace=namespace)
