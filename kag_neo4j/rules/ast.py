"""The parsed form of KAG's rule language (``Define`` rules and ``MATCH … RETURN`` queries).

Every node keeps its :class:`~kag_neo4j.schema.issues.Location` so that later stages (the
dependency graph, the compiler) can point at the exact place in the file.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from kag_neo4j.schema.issues import Location


class _Node(BaseModel):
    model_config = ConfigDict(frozen=True)


class TypeRef(_Node):
    """``App``, ``RiskMining.App``, or a concept ``TaxOfRiskApp/`赌博应用```."""

    name: str
    namespace: str | None = None
    concept: str | None = None
    location: Location

    def __str__(self) -> str:
        base = f"{self.namespace}.{self.name}" if self.namespace else self.name
        return f"{base}/{self.concept}" if self.concept is not None else base


class NodePattern(_Node):
    var: str | None = None
    types: tuple[TypeRef, ...] = ()
    location: Location


class EdgePattern(_Node):
    var: str | None = None
    types: tuple[str, ...] = ()
    direction: Literal["out", "in", "both"]
    location: Location


class PathPattern(_Node):
    """``nodes[0] edges[0] nodes[1] …``; ``len(nodes) == len(edges) + 1``."""

    nodes: tuple[NodePattern, ...]
    edges: tuple[EdgePattern, ...] = ()


# ---------------------------------------------------------------------------- expressions
class Literal_(_Node):
    kind: Literal["literal"] = "literal"
    value: str | int | float | bool | None
    location: Location


class ListExpr(_Node):
    kind: Literal["list"] = "list"
    items: tuple[Expr, ...]
    location: Location


class Name(_Node):
    kind: Literal["name"] = "name"
    name: str
    location: Location


class Property(_Node):
    kind: Literal["property"] = "property"
    var: str
    key: str
    location: Location


class Unary(_Node):
    kind: Literal["unary"] = "unary"
    op: Literal["not", "-"]
    operand: Expr
    location: Location


BinaryOp = Literal["or", "and", "==", "!=", "<", "<=", ">", ">=", "like", "in", "+", "-", "*", "/", "%"]


class Binary(_Node):
    kind: Literal["binary"] = "binary"
    op: BinaryOp
    left: Expr
    right: Expr
    location: Location


class Call(_Node):
    kind: Literal["call"] = "call"
    name: str
    args: tuple[Expr, ...]
    location: Location


class Aggregate(_Node):
    """``group(s, o).count(d)`` / ``group(s).sum(f.transAmt)``."""

    kind: Literal["aggregate"] = "aggregate"
    keys: tuple[str, ...]
    func: str
    arg: Expr
    location: Location


Expr = Annotated[
    Union[Literal_, ListExpr, Name, Property, Unary, Binary, Call, Aggregate], Field(discriminator="kind")
]
ListExpr.model_rebuild()
Unary.model_rebuild()
Binary.model_rebuild()
Call.model_rebuild()
Aggregate.model_rebuild()


# ---------------------------------------------------------------------------- rule items
class Condition(_Node):
    """``R1("why"): expr`` or a bare boolean ``expr``."""

    kind: Literal["condition"] = "condition"
    name: str | None = None
    description: str | None = None
    expr: Expr
    location: Location


class Assignment(_Node):
    """``name("why") = expr``; the name ``o`` of a property rule is the derived value."""

    kind: Literal["assignment"] = "assignment"
    name: str
    description: str | None = None
    expr: Expr
    location: Location


ConstraintItem = Annotated[Union[Condition, Assignment], Field(discriminator="kind")]


class CreateNode(_Node):
    kind: Literal["create_node"] = "create_node"
    var: str | None = None
    type: TypeRef
    values: tuple[tuple[str, Expr], ...] = ()
    location: Location


class CreateEdge(_Node):
    kind: Literal["create_edge"] = "create_edge"
    var: str | None = None
    src: str
    dst: str
    type: str
    values: tuple[tuple[str, Expr], ...] = ()
    location: Location


ActionItem = Annotated[Union[CreateNode, CreateEdge], Field(discriminator="kind")]


class RuleHead(_Node):
    """``(s:T)-[p:predicate]->(o:T2)``."""

    subject: NodePattern
    predicate: EdgePattern
    object: NodePattern


class Rule(_Node):
    """One ``Define`` block."""

    head: RuleHead
    structure: tuple[PathPattern, ...] = ()
    constraint: tuple[ConstraintItem, ...] = ()
    action: tuple[ActionItem, ...] | None = None
    text: str
    namespace: str | None = None
    location: Location


class ReturnItem(_Node):
    expr: Expr
    alias: str | None = None
    location: Location


class Query(_Node):
    """``MATCH pattern [WHERE expr] RETURN items`` (KAG's query files, e.g. the medicine demo)."""

    match: tuple[PathPattern, ...]
    where: Expr | None = None
    returns: tuple[ReturnItem, ...]
    text: str
    location: Location


class RuleFile(_Node):
    source: str
    namespace: str | None = None
    rules: tuple[Rule, ...] = ()
    queries: tuple[Query, ...] = ()
