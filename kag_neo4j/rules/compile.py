"""Compile one rule to parameterized Cypher (templates in ``cypher/rules/``).

A rule is one of four kinds, decided by its head and blocks:

* ``relation`` — ``Define (s:A)-[p:rel]->(o:B)``: ``MERGE (s)-[:rel {derived_by}]->(o)``;
* ``membership`` — the object is a concept ``(o:T/`name`)``: ``(s)-[:BELONGS_TO {derived_by}]->(:Concept)``
  (predicates other than ``belongTo`` keep their own type);
* ``property`` — the object is a literal type (``Text``, ``Integer``, ``Float``, ``STD.*``) and
  ``o = expr`` gives the value: ``SET s.<predicate> = value`` with ``<predicate>_derived_by``,
  ``_rule_version`` and ``_as_of`` beside it;
* ``action`` — an ``Action`` block: ``createNodeInstance`` / ``createEdgeInstance``.

Each compiled rule has retract statements (remove what the same rule derived before) and one
derive statement; :mod:`kag_neo4j.rules.apply` runs them in one transaction. It also lists the
facts it reads and writes, for the dependency order (:mod:`kag_neo4j.rules.depends`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from kag_neo4j.builder.concepts import concept_id as make_concept_id
from kag_neo4j.errors import InvalidIdentifierError, KagError
from kag_neo4j.rules import ast
from kag_neo4j.rules.errors import RuleCompileError
from kag_neo4j.rules.expressions import (
    Params,
    Scope,
    checked_ident,
    compile_aggregate,
    compile_expr,
    equalities,
    literal_value,
    names_in,
    properties_in,
)
from kag_neo4j.rules.load import LoadedRule, RuleSet
from kag_neo4j.rules.render import Fragment, Ident, ident, render
from kag_neo4j.schema.issues import Location
from kag_neo4j.schema.models import ResolvedSchema, TypeKind
from kag_neo4j.schema.naming import label_for

LITERAL_TYPES = frozenset({"Text", "Integer", "Float", "Boolean", "Double", "Long", "Date"})
MEMBERSHIP_TYPE = "BELONGS_TO"
RESERVED_VALUE_KEYS = frozenset({"id", "derived_by", "rule_version", "as_of"})
#: ``source`` of concept nodes a membership rule creates
CONCEPT_SOURCE = "rule"


class RuleKind(str, Enum):
    RELATION = "relation"
    MEMBERSHIP = "membership"
    PROPERTY = "property"
    ACTION = "action"


class Statement(BaseModel):
    model_config = ConfigDict(frozen=True)

    purpose: Literal["retract", "derive", "query"]
    cypher: str
    parameters: dict[str, object]


class NodeShape(BaseModel):
    """What is known of a node a rule reads or writes: its type labels, the concepts it must
    belong to, and whether the rule's own Action creates it."""

    model_config = ConfigDict(frozen=True)

    labels: frozenset[str] = frozenset()
    concepts: frozenset[str] = frozenset()
    created: bool = False


class Fact(BaseModel):
    """A kind of fact a rule reads or writes (see :mod:`kag_neo4j.rules.depends`)."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["relation", "concept", "property", "node"]
    types: frozenset[str] | None = None
    a: NodeShape | None = None
    b: NodeShape | None = None
    directed: bool = True
    key: str | None = None
    constants: tuple[tuple[str, object], ...] = ()
    #: a node read whose variable is on no edge of the pattern (its nodes alone make matches)
    alone: bool = False

    def describe(self) -> str:
        if self.kind == "concept":
            return f"membership of concept {self.key}"
        if self.kind == "property":
            return f"property {self.key}" + (f" of {'/'.join(sorted(self.a.labels))}" if self.a and self.a.labels else "")
        if self.kind == "node":
            return f"{'/'.join(sorted(self.a.labels)) if self.a else ''} nodes"
        kinds = "|".join(sorted(self.types)) if self.types else "any"
        return f"relation {kinds}"


class CompiledRule(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    version: str
    position: int
    kind: RuleKind
    location: Location
    uses_now: bool
    retract: tuple[Statement, ...]
    derive: Statement
    reads: tuple[Fact, ...]
    writes: tuple[Fact, ...]

    @property
    def statements(self) -> tuple[Statement, ...]:
        return (*self.retract, self.derive)


@dataclass
class _Var:
    name: str
    rendered: str
    labels: set[str] = field(default_factory=set)
    concepts: dict[str, str] = field(default_factory=dict)  # concept id -> concept name
    location: Location | None = None
    rendered_once: bool = False

    def shape(self, created: bool = False) -> NodeShape:
        return NodeShape(labels=frozenset(self.labels), concepts=frozenset(self.concepts), created=created)


class _RuleCompiler:
    def __init__(self, loaded: LoadedRule, rules: RuleSet) -> None:
        self.loaded = loaded
        self.rule = loaded.rule
        self.namespace = rules.namespace or self.rule.namespace
        self.schema = rules.schema_
        self.params = Params()
        self.nodes: dict[str, _Var] = {}
        self.edges: dict[str, Location] = {}
        self.anonymous = 0
        self.reads: list[Fact] = []
        self.writes: list[Fact] = []

    # ------------------------------------------------------------------ names and types
    def fail(self, location: Location | None, message: str) -> RuleCompileError:
        return RuleCompileError(location, f"{message} (rule {self.loaded.id})")

    def check_namespace(self, ref: ast.TypeRef) -> None:
        if ref.namespace and ref.namespace != "STD" and self.namespace and ref.namespace != self.namespace:
            raise self.fail(ref.location, f"expected a type of namespace {self.namespace}, found {ref}")

    def label(self, ref: ast.TypeRef) -> str:
        self.check_namespace(ref)
        if self.schema is not None:
            try:
                self.schema.get_type(ref.name)
            except KeyError:
                known = ", ".join(t.name for t in self.schema.types)
                raise self.fail(ref.location, f"expected a type of schema {self.schema.namespace} ({known}), "
                                f"found unknown type '{ref.name}'") from None
        try:
            return label_for(ref.name)
        except InvalidIdentifierError as exc:
            raise self.fail(ref.location, f"{exc}; rename it in the rule") from exc

    def concept(self, ref: ast.TypeRef) -> tuple[str, str]:
        assert ref.concept is not None
        self.label(ref)
        try:
            return make_concept_id(ref.concept), ref.concept
        except KagError as exc:
            raise self.fail(ref.location, str(exc)) from exc

    def is_literal(self, ref: ast.TypeRef) -> bool:
        return ref.concept is None and (ref.namespace == "STD" or (ref.namespace is None and ref.name in LITERAL_TYPES))

    def ancestors(self, label: str) -> set[str]:
        if self.schema is None:
            return {label}
        for spg_type in self.schema.types:
            if spg_type.label == label:
                return set(spg_type.labels) | {label}
        return {label}

    def bind_node(self, node: ast.NodePattern) -> _Var:
        if node.var is None:
            self.anonymous += 1
            name = f"__n{self.anonymous}"
            var = self.nodes[name] = _Var(name=name, rendered=name, location=node.location)
        else:
            if node.var in self.edges:
                raise self.fail(node.location, f"expected a node variable, found '{node.var}', an edge variable")
            var = self.nodes.get(node.var) or _Var(node.var, checked_ident(node.var, node.location, "variable"),
                                                    location=node.location)
            self.nodes[node.var] = var
        if len(node.types) > 1:
            raise self.fail(node.location, "expected one type per node, found several (A|B); write one rule per type")
        for ref in node.types:
            if ref.concept is not None:
                concept_id, concept_name = self.concept(ref)
                var.concepts[concept_id] = concept_name
            elif self.is_literal(ref):
                raise self.fail(ref.location, f"expected a node type, found the value type {ref}")
            else:
                var.labels.add(self.label(ref))
        if len(var.labels) > 1:
            raise self.fail(node.location, f"expected one type for '{node.var}', found {', '.join(sorted(var.labels))}")
        return var

    # ------------------------------------------------------------------ patterns
    def render_node(self, var: _Var) -> str:
        if var.rendered_once:
            return f"({var.rendered})"
        var.rendered_once = True
        labels = "".join(f":{ident(label, what='label')}" for label in sorted(var.labels))
        return f"({var.rendered}{labels})"

    def render_edge(self, edge: ast.EdgePattern) -> str:
        inner = ""
        if edge.var is not None:
            if edge.var in self.nodes:
                raise self.fail(edge.location, f"expected an edge variable, found '{edge.var}', a node variable")
            if edge.var in self.edges:
                raise self.fail(edge.location, f"expected a new edge variable, found '{edge.var}' a second time")
            self.edges[edge.var] = edge.location
            inner = checked_ident(edge.var, edge.location, "variable")
        if edge.types:
            inner += ":" + "|".join(checked_ident(t, edge.location, "relation name") for t in edge.types)
        body = f"[{inner}]"
        return {"out": f"-{body}->", "in": f"<-{body}-", "both": f"-{body}-"}[edge.direction]

    def match(self, head_vars: list[_Var], paths: Iterable[ast.PathPattern]) -> tuple[list[str], list[tuple[_Var, _Var, ast.EdgePattern]]]:
        rendered_paths: list[str] = []
        hops: list[tuple[_Var, _Var, ast.EdgePattern]] = []
        for path in paths:
            bound = [self.bind_node(node) for node in path.nodes]
            text = self.render_node(bound[0])
            for index, edge in enumerate(path.edges):
                text += self.render_edge(edge) + self.render_node(bound[index + 1])
                hops.append((bound[index], bound[index + 1], edge))
            rendered_paths.append(text)
        for var in head_vars:
            if not var.rendered_once:
                rendered_paths.append(self.render_node(var))
        return rendered_paths, hops

    def membership_tests(self) -> list[str]:
        tests = []
        for var in self.nodes.values():
            for concept_id in sorted(var.concepts):
                tests.append(f"EXISTS {{ ({var.rendered})-[:{MEMBERSHIP_TYPE}]->(:Concept)-[:IS_A*0..]->"
                             f"(:Concept {{id: {self.params.add(concept_id)}}}) }}")
        return tests

    # ------------------------------------------------------------------ constraint staging
    def pipeline(self, head_vars: list[_Var], extra_names: set[str]) -> tuple[list[str], Scope, dict[str, ast.Assignment], list[str]]:
        """The MATCH … WITH … clauses of the rule body; returns the clauses, the final scope,
        the assignments by name, and the group keys ([] when nothing is aggregated)."""
        patterns, hops = self.match(head_vars, self.rule.structure)
        self.hops = hops
        clauses = ["MATCH " + ", ".join(patterns)]
        where: list[str] = self.membership_tests()
        scope = Scope(variables=set(self.nodes) | set(self.edges))
        assignments: dict[str, ast.Assignment] = {}
        for item in self.rule.constraint:
            if isinstance(item, ast.Assignment):
                if item.name in assignments or item.name in scope.variables:
                    raise self.fail(item.location, f"expected a new name, found '{item.name}' assigned twice or used as a variable")
                assignments[item.name] = item
        aggregated = {name for name, item in assignments.items() if isinstance(item.expr, ast.Aggregate)}

        def depends_on_aggregate(names: set[str], seen: frozenset[str] = frozenset()) -> bool:
            for name in names:
                if name in aggregated:
                    return True
                if name in assignments and name not in seen and depends_on_aggregate(names_in(assignments[name].expr), seen | {name}):
                    return True
            return False

        pre = [item for item in self.rule.constraint
               if not (isinstance(item, ast.Assignment) and item.name in aggregated)
               and not depends_on_aggregate(names_in(item.expr))]
        post = [item for item in self.rule.constraint
                if item not in pre and not (isinstance(item, ast.Assignment) and item.name in aggregated)]
        self.pre_conditions = [item for item in pre if isinstance(item, ast.Condition)]

        def emit(items: list[ast.Condition | ast.Assignment]) -> None:
            pending = list(items)
            while pending:
                progressed = False
                for item in list(pending):
                    needed = names_in(item.expr) & set(assignments)
                    if not needed <= scope.locals:
                        continue
                    pending.remove(item)
                    progressed = True
                    code = compile_expr(item.expr, scope, self.params)
                    if isinstance(item, ast.Condition):
                        where.append(code)
                    else:
                        flush()
                        clauses.append(f"WITH *, {code} AS {checked_ident(item.name, item.location, 'name')}")
                        scope.locals.add(item.name)
                        if scope.visible is not None:
                            scope.visible.add(item.name)
                if not progressed:
                    item = pending[0]
                    missing = sorted((names_in(item.expr) & set(assignments)) - scope.locals)
                    raise self.fail(item.location, f"expected values assigned without a cycle, found '{missing[0]}' "
                                    "depending on itself")

        def flush() -> None:
            if where:
                clauses[-1] += "\nWHERE " + " AND ".join(where)
                where.clear()

        emit(pre)
        keys: list[str] = []
        if aggregated:
            aggregates = [assignments[name] for name in assignments if name in aggregated]
            first = aggregates[0].expr
            assert isinstance(first, ast.Aggregate)
            keys = list(dict.fromkeys(first.keys))
            row_vars: set[str] | None = None
            for item in aggregates:
                expr = item.expr
                assert isinstance(expr, ast.Aggregate)
                if set(expr.keys) != set(keys):
                    raise self.fail(item.location, f"expected every aggregate of a rule to group by the same variables "
                                    f"({', '.join(keys)}), found group({', '.join(expr.keys)}); split the rule")
                for key in expr.keys:
                    if key not in self.nodes and key not in self.edges:
                        raise self.fail(expr.location, f"expected a node or edge variable in group(…), found '{key}'")
                used = names_in(expr.arg) - set(keys)
                if row_vars is not None and used != row_vars:
                    raise self.fail(item.location, "expected the aggregates of a rule to range over the same variables "
                                    f"({', '.join(sorted(row_vars))}), found {', '.join(sorted(used))}; split the rule")
                row_vars = used
            flush()
            carried = [*keys, *sorted(row_vars or set())]
            clauses.append("WITH DISTINCT " + ", ".join(checked_ident(n, None, "variable") for n in carried))
            parts = [checked_ident(k, None, "variable") for k in keys]
            for item in aggregates:
                assert isinstance(item.expr, ast.Aggregate)
                parts.append(f"{compile_aggregate(item.expr, scope, self.params)} AS {checked_ident(item.name, item.location, 'name')}")
                scope.locals.add(item.name)
            clauses.append("WITH " + ", ".join(parts))
            scope.visible = set(keys) | aggregated
            emit(post)
        flush()
        for name in extra_names:
            if name in assignments and name not in scope.locals:
                raise self.fail(assignments[name].location, f"'{name}' is never computed")
        return clauses, scope, assignments, keys

    # ------------------------------------------------------------------ facts
    def read_facts(self, assignments: dict[str, ast.Assignment]) -> None:
        constants: dict[str, dict[str, object]] = {}
        for condition in self.pre_conditions:
            for (var, key), value in equalities(condition.expr).items():
                constants.setdefault(var, {})[key] = value
        on_edges = {id(end) for left, right, _ in self.hops for end in (left, right)}
        for name, var in self.nodes.items():
            self.reads.append(Fact(kind="node", a=var.shape(), constants=tuple(sorted(constants.get(name, {}).items())),
                                   alone=id(var) not in on_edges))
            for concept_id in var.concepts:
                self.reads.append(Fact(kind="concept", key=concept_id))
        for left, right, edge in self.hops:
            a, b = (right, left) if edge.direction == "in" else (left, right)
            self.reads.append(Fact(kind="relation", types=frozenset(edge.types) or None, a=a.shape(), b=b.shape(),
                                   directed=edge.direction != "both"))
        exprs = [item.expr for item in self.rule.constraint]
        for action in self.rule.action or ():
            exprs.extend(value for _, value in action.values)
        for expr in exprs:
            for var, key in properties_in(expr):
                if var in self.nodes:
                    self.reads.append(Fact(kind="property", a=self.nodes[var].shape(), key=key))

    # ------------------------------------------------------------------ kinds
    def compile(self) -> CompiledRule:
        head = self.rule.head
        obj = head.object
        predicate = head.predicate.types[0]
        if head.subject.var is None:
            raise self.fail(head.subject.location, "expected a subject variable, as in (s:Type)")
        if self.rule.action is not None:
            kind = RuleKind.ACTION
        elif any(ref.concept is not None for ref in obj.types):
            kind = RuleKind.MEMBERSHIP
        elif obj.types and all(self.is_literal(ref) for ref in obj.types):
            kind = RuleKind.PROPERTY
        else:
            kind = RuleKind.RELATION
        subject = self.bind_node(head.subject)
        head_vars = [subject]
        if kind == RuleKind.RELATION:
            if obj.var is None:
                raise self.fail(obj.location, "expected an object variable, as in (o:Type)")
            head_vars.append(self.bind_node(obj))
        elif kind == RuleKind.ACTION and obj.var is not None and self._used(obj.var):
            head_vars.append(self.bind_node(obj))
        elif obj.var is not None and any(obj.var in (n.var for n in p.nodes) for p in self.rule.structure):
            raise self.fail(obj.location, f"'{obj.var}' is the {kind.value} rule's object; it cannot appear in Structure")
        output = {"o"} if kind == RuleKind.PROPERTY else set()
        if kind == RuleKind.PROPERTY:
            output = {obj.var or "o"}
        clauses, scope, assignments, keys = self.pipeline(head_vars, output)
        self.read_facts(assignments)
        base = {"rule_id": self.loaded.id, "rule_version": self.loaded.version}
        subject_ident = Ident(subject.rendered)
        if keys and subject.name not in keys:
            raise self.fail(self.rule.location, f"expected the aggregates to group by the subject '{subject.name}', "
                            f"found group({', '.join(keys)})")
        body = Fragment("\n".join(clauses))
        retract: list[Statement] = []
        rel_type = Ident(checked_ident(predicate, head.predicate.location, "relation name"))
        if kind == RuleKind.RELATION:
            target = self.nodes[obj.var]  # type: ignore[index]
            if keys and target.name not in keys:
                raise self.fail(self.rule.location, f"expected the aggregates to group by the object '{target.name}' too")
            cypher = render("derive_relation", body=body, subject=subject_ident, object=Ident(target.rendered), rel_type=rel_type)
            retract.append(self.statement("retract", render("retract_edges", rel_type=rel_type), base))
            self.writes.append(Fact(kind="relation", types=frozenset({predicate}), a=subject.shape(), b=target.shape()))
        elif kind == RuleKind.MEMBERSHIP:
            (ref,) = [r for r in obj.types if r.concept is not None]
            concept_id, concept_name = self.concept(ref)
            concept_label = self.label(ref)
            member_type = MEMBERSHIP_TYPE if predicate.casefold() == "belongto" else predicate
            rel_type = Ident(checked_ident(member_type, head.predicate.location, "relation name"))
            cypher = render("derive_membership", body=body, subject=subject_ident, rel_type=rel_type,
                            concept_label=ident(concept_label, what="label"))
            self.params.values.update(concept_id=concept_id, concept_name=concept_name, concept_source=CONCEPT_SOURCE)
            retract.append(self.statement("retract", render("retract_edges", rel_type=rel_type), base))
            self.writes.append(Fact(kind="concept", key=concept_id))
            self.writes.append(Fact(kind="relation", types=frozenset({member_type}), a=subject.shape(),
                                    b=NodeShape(labels=frozenset({"Concept", concept_label}))))
        elif kind == RuleKind.PROPERTY:
            name = obj.var or "o"
            if name not in assignments:
                raise self.fail(self.rule.location, f"expected '{name} = …' in the Constraint block: it gives the "
                                f"value of {predicate}")
            clauses.append(f"WITH *, {checked_ident(name, None, 'name')} AS __value")
            keys_ = {suffix: ident(f"{predicate}{suffix}", what="property key")
                     for suffix in ("", "_derived_by", "_rule_version", "_as_of")}
            cypher = render("derive_property", body=Fragment("\n".join(clauses)), subject=subject_ident, key=keys_[""],
                            by_key=keys_["_derived_by"], version_key=keys_["_rule_version"], as_of_key=keys_["_as_of"])
            label = ident(next(iter(subject.labels)), what="label") if subject.labels else None
            retract.append(self.statement("retract", render(
                "retract_property", label=label, key=keys_[""], by_key=keys_["_derived_by"],
                version_key=keys_["_rule_version"], as_of_key=keys_["_as_of"]), base))
            self.writes.append(Fact(kind="property", a=subject.shape(), key=predicate))
        else:
            cypher, retract = self.action(body, scope, assignments, base)
        uses_now = scope.uses_now
        parameters = {**base, **self.params.values, "as_of": None, "now": None}
        derive = Statement(purpose="derive", cypher=cypher, parameters=parameters)
        return CompiledRule(id=self.loaded.id, version=self.loaded.version, position=self.loaded.position, kind=kind,
                            location=self.rule.location, uses_now=uses_now, retract=tuple(retract), derive=derive,
                            reads=tuple(dict.fromkeys(self.reads)), writes=tuple(dict.fromkeys(self.writes)))

    def statement(self, purpose: Literal["retract", "derive"], cypher: str, base: dict[str, object]) -> Statement:
        return Statement(purpose=purpose, cypher=cypher, parameters=dict(base))

    def _used(self, name: str) -> bool:
        in_structure = any(name in (n.var for n in p.nodes) for p in self.rule.structure)
        in_exprs = any(name in names_in(item.expr) for item in self.rule.constraint)
        in_actions = any(name in (a.src, a.dst) for a in self.rule.action or () if isinstance(a, ast.CreateEdge))
        return in_structure or in_exprs or in_actions

    # ------------------------------------------------------------------ actions
    def action(self, body: Fragment, scope: Scope, assignments: dict[str, ast.Assignment],
               base: dict[str, object]) -> tuple[str, list[Statement]]:
        created: dict[str, _Var] = {}
        node_items: list[dict[str, object]] = []
        edge_items: list[dict[str, object]] = []
        retract: list[Statement] = []
        used: set[str] = set()

        def expand(names: set[str], seen: frozenset[str] = frozenset()) -> set[str]:
            out: set[str] = set()
            for name in names:
                if name in assignments and name not in seen:
                    out |= {name} | expand(names_in(assignments[name].expr), seen | {name})
                else:
                    out.add(name)
            return out

        for item in self.rule.action or ():
            for _, value in item.values:
                used |= names_in(value)
            if isinstance(item, ast.CreateEdge):
                used |= {item.src, item.dst}
        used -= {item.var for item in self.rule.action or () if isinstance(item, ast.CreateNode) and item.var}
        closure = expand(used)
        node_keys = sorted(n for n in closure if n in self.nodes)
        carried = sorted(n for n in used if n in self.nodes or n in self.edges or n in assignments)
        for name in carried:
            if scope.visible is not None and name not in scope.visible:
                raise self.fail(self.rule.location, f"'{name}' is not known after the aggregate; group by it to use it in the Action")
        if not node_keys:
            raise self.fail(self.rule.location, "expected the Action to use a node of the rule's pattern, found none")
        action_scope = Scope(variables=set(self.nodes) | set(self.edges), locals=set(scope.locals))
        id_parts = ", ".join(f"coalesce(toString({self.nodes[n].rendered}.id), elementId({self.nodes[n].rendered}))"
                             for n in node_keys)
        self.params.values["id_sep"] = ":"
        for index, item in enumerate(self.rule.action or (), start=1):
            if isinstance(item, ast.CreateNode):
                label = self.label(item.type)
                if item.type.concept is not None:
                    raise self.fail(item.type.location, "expected an entity or event type for createNodeInstance, found a concept")
                base_label = self.base_label(item.type.name)
                name = item.var or f"__new{index}"
                if name in self.nodes or name in self.edges or name in created:
                    raise self.fail(item.location, f"expected a new name for the created node, found '{name}' already used")
                rendered = checked_ident(name, item.location, "variable") if item.var else name
                var = created[name] = _Var(name, rendered, labels={label, base_label})
                prefix = self.params.add(f"{self.loaded.id}#{index}")
                values: list[tuple[Ident, Fragment]] = []
                edges: list[dict[str, object]] = []
                constants: dict[str, object] = {}
                for key, value in item.values:
                    if key in RESERVED_VALUE_KEYS:
                        raise self.fail(value.location, f"expected a property other than {', '.join(sorted(RESERVED_VALUE_KEYS))}, "
                                        f"found '{key}' (kag-neo4j sets it)")
                    target = self.relation_target(item.type.name, key, value)
                    if target is not None:
                        edge_var = f"__e{index}_{len(edges) + 1}"
                        edges.append({"var": Fragment(edge_var), "type": Ident(checked_ident(key, item.location, "relation name")),
                                      "target": Ident(self.nodes[target].rendered)})
                        self.writes.append(Fact(kind="relation", types=frozenset({key}), a=var.shape(created=True),
                                                b=self.nodes[target].shape()))
                        continue
                    values.append((Ident(checked_ident(key, item.location, "property key")), compile_expr(value, action_scope, self.params)))
                    try:
                        constants[key] = literal_value(value)
                    except ValueError:
                        pass
                node_items.append({
                    "var": Fragment(rendered), "base": ident(base_label, what="label"), "label": ident(label, what="label"),
                    "id": Fragment(f"reduce(__acc = {prefix}, __k IN [{id_parts}] | __acc + $id_sep + "
                                   f"toString(size(__k)) + $id_sep + __k)"),
                    "props": values, "edges": edges,
                })
                self.writes.append(Fact(kind="node", a=var.shape(created=True), constants=tuple(sorted(constants.items()))))
                retract.append(self.statement("retract", render("retract_nodes", label=ident(base_label, what="label")), base))
            else:
                ends = []
                for end in (item.src, item.dst):
                    if end in created:
                        ends.append((created[end].rendered, created[end].shape(created=True)))
                    elif end in self.nodes:
                        ends.append((self.nodes[end].rendered, self.nodes[end].shape()))
                    else:
                        raise self.fail(item.location, f"expected a node of the pattern or a created node for src/dst, found '{end}'")
                rel = Ident(checked_ident(item.type, item.location, "relation name"))
                values = [(Ident(checked_ident(key, item.location, "property key")), compile_expr(value, action_scope, self.params))
                          for key, value in item.values if key not in RESERVED_VALUE_KEYS]
                edge_items.append({"var": Fragment(f"__e{index}"), "src": Fragment(ends[0][0]), "dst": Fragment(ends[1][0]),
                                   "type": rel, "props": values})
                self.writes.append(Fact(kind="relation", types=frozenset({item.type}), a=ends[0][1], b=ends[1][1]))
                retract.append(self.statement("retract", render("retract_edges", rel_type=rel), base))
        scope.uses_now = scope.uses_now or action_scope.uses_now
        cypher = render("derive_action", body=body, carried=[Fragment(self.render_name(n)) for n in carried],
                        nodes=node_items, edges=edge_items)
        return cypher, list({s.cypher: s for s in retract}.values())

    def render_name(self, name: str) -> str:
        if name in self.nodes:
            return self.nodes[name].rendered
        return checked_ident(name, None, "variable")

    def base_label(self, type_name: str) -> str:
        if self.schema is None:
            return "Entity"
        kind = self.schema.get_type(type_name).kind
        return {TypeKind.EVENT: "Event", TypeKind.CONCEPT: "Concept"}.get(kind, "Entity")

    def relation_target(self, type_name: str, key: str, value: ast.Expr) -> str | None:
        """The pattern node a created node's ``key`` points at, when the schema declares ``key``
        as a relation of ``type_name`` and the value names a node (``x`` or ``x.id``); other
        values (constants such as a concept name) stay properties."""
        if self.schema is None:
            return None
        spg_type = self.schema.get_type(type_name)
        if not any(rel.name == key for rel in spg_type.relations):
            return None
        if isinstance(value, ast.Property) and value.key == "id" and value.var in self.nodes:
            return value.var
        if isinstance(value, ast.Name) and value.name in self.nodes:
            return value.name
        return None


def compile_rule(loaded: LoadedRule, rules: RuleSet) -> CompiledRule:
    """Compile one rule of ``rules`` (which gives the namespace and schema)."""
    return _RuleCompiler(loaded, rules).compile()


def compile_query(query: ast.Query, rules: RuleSet) -> Statement:
    """A ``MATCH … RETURN`` query of a rule file as one read-only statement."""
    placeholder = LoadedRule(id="query", version="", position=0, rule=ast.Rule(
        head=ast.RuleHead(subject=ast.NodePattern(var="__q", location=query.location),
                          predicate=ast.EdgePattern(var="p", types=("query",), direction="out", location=query.location),
                          object=ast.NodePattern(var="__o", location=query.location)),
        structure=query.match, text=query.text, location=query.location))
    compiler = _RuleCompiler(placeholder, rules)
    patterns, _ = compiler.match([], query.match)
    clauses = ["MATCH " + ", ".join(patterns)]
    scope = Scope(variables=set(compiler.nodes) | set(compiler.edges))
    where = compiler.membership_tests()
    if query.where is not None:
        where.append(compile_expr(query.where, scope, compiler.params))
    if where:
        clauses[-1] += "\nWHERE " + " AND ".join(where)
    returns = []
    for position, item in enumerate(query.returns, start=1):
        alias = item.alias or (f"{item.expr.var}_{item.expr.key}" if isinstance(item.expr, ast.Property)
                               else item.expr.name if isinstance(item.expr, ast.Name) else f"value{position}")
        returns.append(Fragment(f"{compile_expr(item.expr, scope, compiler.params)} AS {checked_ident(alias, item.location, 'name')}"))
    cypher = render("query", body=Fragment("\n".join(clauses)), returns=returns)
    return Statement(purpose="query", cypher=cypher, parameters=dict(compiler.params.values))
