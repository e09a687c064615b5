"""The scanner of one action's text, and the argument readers of the built-in operators.

:class:`Scanner` reads the text of one ``Action<n>:`` line (continued over further lines while a
bracket or a string is open): identifiers, quoted strings (backticks, double, single and
full-width quotes), raw values up to a stop symbol, ``key=value`` argument lists and
``content=[...]`` lists. Full-width brackets, commas, colons and equals signs read as their ASCII
forms. The methods :meth:`Scanner.retrieval`, :meth:`Scanner.math`, :meth:`Scanner.deduce`,
:meth:`Scanner.sort` and :meth:`Scanner.output` are the parser hooks of the built-in operators
(see :mod:`kag_neo4j.solver.lf.registry`); a new operator's hook is any function
``(scanner, pos) -> node`` built from the same readers.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, cast

from kag_neo4j.errors import LogicalFormError
from kag_neo4j.solver.lf.ast import (
    ALIAS_PATTERN,
    DEDUCE_OPS,
    AliasRef,
    CompareOp,
    Constraint,
    DeduceOp,
    Element,
    LiteralItem,
    MathOp,
    OutputOp,
    RetrievalOp,
    SortOp,
    SourcePos,
    fail,
    suggest,
)

__all__ = ["HEADER", "PROPERTY_REF", "Pending", "Region", "Scanner", "alias_or_fail", "literal"]

_PROP_PATTERN = re.compile(r"[^\W\d_]\w{0,127}")
_DEDUCE_SYNONYMS = {op.lower(): op for op in DEDUCE_OPS} | {
    "judge": "judgement",
    "judgment": "judgement",
    "entail": "entailment",
    "multichoice": "multiChoice",
    "multi_choice": "multiChoice",
    "multiple_choice": "multiChoice",
    "greaterthan": "greater",
    "lessthan": "less",
    "equals": "equal",
}
_COMPARE_SYNONYMS = {"==": "=", "<>": "!=", "≠": "!=", "≤": "<=", "≥": ">="}
_DIRECTIONS = {
    "min": "min",
    "max": "max",
    "asc": "min",
    "ascending": "min",
    "desc": "max",
    "descending": "max",
}
HEADER = re.compile(r"[ \t]*(?P<kw>step|action)[ \t]*(?P<num>\d+)[ \t]*[:：][ \t]*", re.IGNORECASE)
_SYMBOLS = {"（": "(", "）": ")", "，": ",", "：": ":", "＝": "=", "【": "[", "】": "]", "［": "[", "］": "]"}
_QUOTES = {"`": "`", '"': '"', "'": "'", "“": "”", "‘": "’", "「": "」"}
# a full-width '，' inside an unquoted type ends it only when the next argument follows
# (``key=`` or a constraint ``x.prop``); a full-width '）' only when nothing but spaces, comments
# or an arrow follows (the end of the action). Otherwise both are part of the type.
_NEXT_ARGUMENT = re.compile(r"\s*[^\W\d]\w*\s*(?:[=＝](?!=)|\.\s*[^\W\d_]\w*\s*[=!<>≠≤≥])")
_ACTION_END = re.compile(r"(?:\s|//[^\n]*)*(?:\Z|->|→|=>)")
_NAME_CLOSE = frozenset("]】］")
_COMPARISON = re.compile(r"==|!=|<>|<=|>=|=|<|>|≠|≤|≥")
_OBJECT_ELEMENT_NEXT = frozenset(":[,)")  # what may follow an alias written as the object without its o=
PROPERTY_REF = re.compile(r"(?P<alias>[^\W\d]\w{0,63})\.(?P<prop>[^\W\d_]\w{0,127})")


def _sym(ch: str) -> str:
    return _SYMBOLS.get(ch, ch)


class Region:
    """The text of one action (possibly several lines) and the map back to plan positions."""

    def __init__(self, text: str, line: int, column: int) -> None:
        self.text = text
        self.line = line  # 1-based line of text[0]
        self.column = column  # 1-based column of text[0]
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def pos(self, offset: int) -> SourcePos:
        index = 0
        for i, start in enumerate(self.starts):
            if start <= offset:
                index = i
        col = offset - self.starts[index] + 1
        return SourcePos(line=self.line + index, column=col + (self.column - 1 if index == 0 else 0))


@dataclass
class Pending:
    """A bare ``[...]`` name that may turn out to bind an alias, or a bare ``x.prop`` constraint
    value that may turn out to read a property of alias ``x``: decided once every definition
    of the plan is known."""

    node: Element | Constraint


class Scanner:
    """Reads one action's text; positions map back to the plan (see :class:`Region`)."""

    def __init__(self, region: Region) -> None:
        self.region = region
        #: bare ``[x]`` names and ``x.prop`` values the hooks found, settled once the plan is read
        self.pending: list[Pending] = []
        self.text = region.text
        self.i = 0
        self.open = False  # inside the operator's (...)
        self.ran_out = False  # an error was raised because the text ended inside (...) or a string
        self.open_quote: str | None = None

    # ---- basics -----------------------------------------------------------------------------

    def pos(self, offset: int | None = None) -> SourcePos:
        return self.region.pos(self.i if offset is None else offset)

    def error(self, message: str, offset: int | None = None) -> LogicalFormError:
        return fail(message, self.pos(offset))

    def skip(self) -> None:
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch.isspace():
                self.i += 1
            elif self.text.startswith("//", self.i):
                nl = self.text.find("\n", self.i)
                self.i = len(self.text) if nl < 0 else nl
            else:
                break

    def peek(self) -> str:
        self.skip()
        return _sym(self.text[self.i]) if self.i < len(self.text) else ""

    def found(self) -> str:
        self.skip()
        if self.i >= len(self.text):
            self.ran_out = self.ran_out or self.open
            return "the end of the action"
        return repr(self.text[self.i : self.i + 12].split("\n")[0])

    def expect(self, symbol: str, what: str) -> None:
        if self.peek() != symbol:
            raise self.error(f"expected {symbol!r} {what} but found {self.found()}")
        self.i += 1

    def accept(self, symbol: str) -> bool:
        if self.peek() == symbol:
            self.i += 1
            return True
        return False

    def ident(self, what: str) -> tuple[str, SourcePos]:
        self.skip()
        match = re.compile(r"[^\W\d]\w*").match(self.text, self.i)
        if not match:
            raise self.error(f"expected {what} but found {self.found()}")
        self.i = match.end()
        return match.group(), self.pos(match.start())

    def at_quote(self) -> bool:
        self.skip()
        return self.i < len(self.text) and self.text[self.i] in _QUOTES

    def string(self) -> tuple[str, str, SourcePos]:
        """A quoted string: (text, opening quote, position of its first character)."""
        self.skip()
        start = self.i
        opening = self.text[self.i]
        closing = _QUOTES[opening]
        self.i += 1
        chars: list[str] = []
        while self.i < len(self.text):
            ch = self.text[self.i]
            if ch == "\\" and opening != "`" and self.i + 1 < len(self.text):
                nxt = self.text[self.i + 1]
                chars.append({"n": "\n", "t": "\t", "r": "\r"}.get(nxt, nxt))
                self.i += 2
                continue
            if ch == closing:
                self.i += 1
                return "".join(chars), opening, self.pos(start + 1)
            chars.append(ch)
            self.i += 1
        self.ran_out, self.open_quote = True, opening
        raise self.error(f"the string opened with {opening} is never closed", start)

    def raw(self, stops: str, what: str) -> tuple[str, SourcePos]:
        """Unquoted text up to a stop symbol at bracket depth 0 (quotes inside are kept).

        In an argument value (stops ``,)``) a full-width '，' is text unless the next argument
        follows it (``s.city=杭州市，西湖区`` keeps the comma); in lists it always separates."""
        self.skip()
        start = self.i
        depth = 0
        argument = stops == ",)"
        while self.i < len(self.text):
            ch = _sym(self.text[self.i])
            if self.text.startswith("//", self.i) or ch == "\n":
                break
            if depth == 0 and ch in stops:
                if not (argument and self.text[self.i] == "，" and not _NEXT_ARGUMENT.match(self.text, self.i + 1)):
                    break
            if ch in "([":
                depth += 1
            elif ch in ")]":
                if depth == 0:
                    break
                depth -= 1
            self.i += 1
        value = self.text[start : self.i].strip()
        if not value:
            raise self.error(f"expected {what} but found {self.found()}", start)
        return value, self.pos(start)

    def value(self, what: str) -> tuple[str, SourcePos]:
        if self.at_quote():
            text, _, pos = self.string()
            return text, pos
        return self.raw(",)", what)

    # ---- arguments and the built-in operators ---------------------------------------------------

    def keyword_args(self, operator: str, allowed: Sequence[str]) -> Iterator[tuple[str, SourcePos]]:
        """Yield each ``key`` of ``key=value`` arguments; the caller reads the value."""
        seen: set[str] = set()
        if self.accept(")"):
            return
        while True:
            key, pos = self.ident(f"an argument name of {operator} ({', '.join(allowed)})")
            if key not in allowed:
                lowered = {a.lower(): a for a in allowed}
                if key.lower() in lowered:
                    key = lowered[key.lower()]
                else:
                    raise fail(
                        f"unknown argument {key!r} for {operator}{suggest(key, allowed)}; "
                        f"expected {', '.join(allowed)}",
                        pos,
                    )
            if key in seen:
                raise fail(f"argument {key!r} is given twice in {operator}", pos)
            seen.add(key)
            self.expect("=", f"after {key}")
            yield key, pos
            if self.accept(","):
                continue
            self.expect(")", f"or ',' after the {key}= argument of {operator}")
            return

    def retrieval(self, pos: SourcePos) -> RetrievalOp:
        elements: dict[str, Element] = {}
        constraints: list[Constraint] = []
        seen: set[str] = set()
        if not self.accept(")"):
            while True:
                self.skip()
                key_start = self.i
                key, key_pos = self.ident("s=, p=, o= or a constraint such as p.year=2011")
                if self.peek() in _OBJECT_ELEMENT_NEXT and {"s", "p"} <= seen and "o" not in seen:
                    # `Retrieval(s=o1, p=p2:educatedAt, o2:University)`: the one role left, written
                    # without its `o=`, is the object
                    self.i = key_start
                    seen.add("o")
                    elements["o"], bare_bracket = self.element("o")
                    if bare_bracket:
                        self.pending.append(Pending(elements["o"]))
                elif self.peek() == ".":
                    self.i += 1
                    constraint, maybe_ref = self.constraint(key, key_pos)
                    constraints.append(constraint)
                    if maybe_ref:
                        self.pending.append(Pending(constraint))
                elif self.peek() == "=" and not self.text.startswith("==", self.i):
                    role = key.lower()
                    if role not in {"s", "p", "o"}:
                        raise fail(
                            f"unknown argument {key!r} for Retrieval; expected s=, p=, o= or a "
                            "constraint such as p.year=2011",
                            key_pos,
                        )
                    if role in seen:
                        raise fail(f"argument {role!r} is given twice in Retrieval", key_pos)
                    seen.add(role)
                    self.i += 1
                    element, bare_bracket = self.element(role)
                    elements[role] = element
                    if bare_bracket:
                        self.pending.append(Pending(element))
                else:
                    raise self.error(
                        f"expected '=' or '.' after {key!r} in Retrieval but found {self.found()}"
                    )
                if self.accept(","):
                    continue
                self.peek()
                close_at = self.i
                self.expect(")", "or ',' in Retrieval")
                break
        else:
            close_at = self.i - 1
        missing = [role for role in ("s", "p", "o") if role not in elements]
        if missing:
            raise self.error(
                f"Retrieval needs s=, p= and o=; missing {', '.join(m + '=' for m in missing)} "
                "(write o=o1 for an unknown object)",
                close_at,
            )
        return RetrievalOp(
            s=elements["s"], p=elements["p"], o=elements["o"], constraints=constraints, pos=pos
        )

    def element(self, role: str) -> tuple[Element, bool]:
        """``alias[:Type[|Type...]][[name][[id|id...]]]``; True when the name was a bare word
        (it may turn out to bind an alias)."""
        alias, pos = self.ident(f"an alias for {role}= (e.g. {role}1)")
        alias = alias_or_fail(alias, pos)
        types: list[str] = []
        name: str | None = None
        ids: list[str] = []
        bare_bracket = False
        if self.peek() == ":":
            self.i += 1
            types.append(self.type_name(role))
            while self.peek() == "|":
                self.i += 1
                types.append(self.type_name(role))
        if self.peek() == "[":
            open_at = self.i
            self.i += 1
            name, bare_bracket = self.bracket_text("the name", open_at)
            if not name.strip():
                raise self.error(
                    "the name in [...] is empty; write the entity name in backticks, e.g. [`Ada Lovelace`]",
                    open_at,
                )
            if self.peek() == "[":
                ids = self.id_list()
                bare_bracket = False  # [name][id] always names an entity
        element = Element(
            alias=alias, type=types[0] if types else None, alt_types=types[1:], name=name, ids=ids, pos=pos
        )
        return element, bare_bracket

    def type_name(self, role: str) -> str:
        """One type (or predicate) after ':' or '|': quoted, or bare up to ',' ')' '[' '|'.

        In a bare type, full-width brackets and commas are text, except a '，' followed by the
        next argument and a '）' that ends the action (see ``_NEXT_ARGUMENT``/``_ACTION_END``).
        ASCII parentheses must balance (``Type(x)``)."""
        what = "a predicate" if role == "p" else "a type"
        if self.at_quote():
            text, _, text_pos = self.string()
        else:
            self.skip()
            start = self.i
            depth = 0
            while self.i < len(self.text):
                ch = self.text[self.i]
                if ch == "\n" or self.text.startswith("//", self.i):
                    break
                if ch == "(":
                    depth += 1
                elif ch == ")":
                    if depth == 0:
                        break
                    depth -= 1
                elif depth == 0 and (
                    ch in ",[|【［"
                    or (ch == "，" and _NEXT_ARGUMENT.match(self.text, self.i + 1))
                    or (ch == "）" and _ACTION_END.match(self.text, self.i + 1))
                ):
                    break
                self.i += 1
            text, text_pos = self.text[start : self.i].strip(), self.pos(start)
        if not text.strip():
            raise fail(f"{what} after ':' or '|' is empty; write one, e.g. :Person", text_pos)
        return text

    def bracket_text(self, what: str, open_at: int) -> tuple[str, bool]:
        """The rest of a ``[...]`` item after '[': quoted, or bare up to ']' (or '】', '］') on the
        same line — everything else, brackets and commas included, is text. True when bare."""
        if self.at_quote():
            text, _, _ = self.string()
            self.expect("]", f"after {what}")
            return text, False
        self.skip()
        start = self.i
        while self.i < len(self.text) and self.text[self.i] not in _NAME_CLOSE and self.text[self.i] != "\n":
            self.i += 1
        if self.i >= len(self.text) or self.text[self.i] == "\n":
            self.ran_out = self.ran_out or self.i >= len(self.text)
            raise self.error("the '[' is never closed; names go in [`...`]", open_at)
        text = self.text[start : self.i].strip()
        self.i += 1
        return text, True

    def id_list(self) -> list[str]:
        """``[id|id...]`` after a name: each id quoted, or bare up to '|' or ']'."""
        open_at = self.i
        self.i += 1
        ids: list[str] = []
        while True:
            self.skip()
            item_at = self.i
            if self.at_quote():
                text, _, _ = self.string()
            else:
                while self.i < len(self.text) and self.text[self.i] not in _NAME_CLOSE | {"|", "\n"}:
                    self.i += 1
                if self.i >= len(self.text) or self.text[self.i] == "\n":
                    self.ran_out = self.ran_out or self.i >= len(self.text)
                    raise self.error("the '[' of the ids is never closed; write [`id1`|`id2`]", open_at)
                text = self.text[item_at : self.i]
            if not text.strip():
                raise self.error("an id in [...] is empty; write the ids as [`id1`|`id2`]", item_at)
            ids.append(text.strip())
            if self.accept("|"):
                continue
            self.expect("]", "or '|' in the ids")
            return ids

    def constraint(self, target: str, pos: SourcePos) -> tuple[Constraint, bool]:
        """``target.prop op value``; True when the value is a bare ``x.prop`` that may read a
        property of alias ``x``."""
        prop, prop_pos = self.ident("a property name after '.'")
        if not _PROP_PATTERN.fullmatch(prop):
            raise fail(f"property {prop!r} must start with a letter (at most 128 characters)", prop_pos)
        self.skip()
        match = _COMPARISON.match(self.text, self.i)
        if not match:
            raise self.error(
                f"expected a comparison (= != < <= > >=) after {target}.{prop} but found {self.found()}"
            )
        op = cast(CompareOp, _COMPARE_SYNONYMS.get(match.group(), match.group()))
        self.i = match.end()
        if op == "=":  # KAG writes s.value=>160 for "greater than 160": the value's comparison wins
            inner = _COMPARISON.match(self.text, self.i)
            if inner and not inner.group().startswith("="):
                op = cast(CompareOp, _COMPARE_SYNONYMS.get(inner.group(), inner.group()))
                self.i = inner.end()
        maybe_ref = False
        if self.at_quote():
            text, _, _ = self.string()
            value: bool | int | float | str = text
        else:
            raw, _ = self.raw(",)", f"a value after {target}.{prop}{op}")
            value = literal(raw)
            maybe_ref = isinstance(value, str) and PROPERTY_REF.fullmatch(value) is not None
        if target.lower() in {"s", "p", "o"}:
            target = target.lower()
        else:
            target = alias_or_fail(target, pos)
        return Constraint(target=target, prop=prop, op=op, value=value, pos=pos), maybe_ref

    def content(self) -> list[AliasRef | LiteralItem]:
        self.expect("[", "to open the content list")
        items: list[AliasRef | LiteralItem] = []
        if self.accept("]"):
            return items
        while True:
            self.skip()
            start = self.i
            if self.at_quote():
                text, quote, pos = self.string()
                if quote == "`" and ALIAS_PATTERN.fullmatch(text.strip()):
                    items.append(AliasRef(alias=text.strip(), pos=pos))
                else:
                    items.append(LiteralItem(value=text, pos=pos))
            else:
                raw, pos = self.raw(",]", "an alias or a quoted text")
                value = literal(raw)
                if isinstance(value, str):
                    if not ALIAS_PATTERN.fullmatch(value):
                        raise fail(
                            f"content item {raw!r} is neither an alias nor quoted text; put text "
                            'in quotes ("...") and aliases in backticks',
                            self.pos(start),
                        )
                    items.append(AliasRef(alias=value, pos=pos))
                else:
                    items.append(LiteralItem(value=value, pos=pos))
            if self.accept(","):
                continue
            self.expect("]", "or ',' in the content list")
            return items

    def math(self, pos: SourcePos) -> MathOp:
        fields: dict[str, Any] = {"pos": pos, "output": "_"}
        for key, _ in self.keyword_args("Math", ("content", "target")):
            if key == "content":
                fields["content"] = self.content()
            else:
                fields["target"], fields["target_pos"] = self.value("an expression such as `2011 - o2`")
        if "target" not in fields:
            raise self.error(
                "Math needs target=`<expression>`, e.g. Math(content=[`o2`], target=`2011 - o2`)->m1"
            )
        return MathOp.model_construct(**{"content": [], **fields})

    def deduce(self, pos: SourcePos) -> DeduceOp:
        fields: dict[str, Any] = {"pos": pos, "output": "_"}
        for key, _ in self.keyword_args("Deduce", ("op", "content", "target")):
            if key == "op":
                raw, op_pos = self.raw(",)", "a Deduce op")
                op = _DEDUCE_SYNONYMS.get(raw.strip().lower())
                if op is None:
                    raise fail(
                        f"unknown Deduce op {raw!r}{suggest(raw, DEDUCE_OPS)}; expected one of "
                        f"{', '.join(DEDUCE_OPS)}",
                        op_pos,
                    )
                fields["op"] = op
            elif key == "content":
                fields["content"] = self.content()
            else:
                fields["target"], _ = self.value("a question or statement")
        if "op" not in fields:
            raise self.error(f"Deduce needs op=<{'|'.join(DEDUCE_OPS)}>")
        return DeduceOp.model_construct(**{"content": [], "target": None, **fields})

    def sort(self, pos: SourcePos) -> SortOp:
        fields: dict[str, Any] = {"pos": pos, "output": "_"}
        for key, _ in self.keyword_args("Sort", ("set", "orderby", "direction", "limit")):
            if key == "set":
                if self.at_quote():
                    alias, _, alias_pos = self.string()
                else:
                    alias, alias_pos = self.ident("the alias of the set to sort")
                fields["source"] = AliasRef(alias=alias_or_fail(alias.strip(), alias_pos), pos=alias_pos)
            elif key == "orderby":
                fields["orderby"], _ = self.value("what to order by")
            elif key == "direction":
                raw, raw_pos = self.raw(",)", "min or max")
                direction = _DIRECTIONS.get(raw.strip().lower())
                if direction is None:
                    raise fail(f"Sort direction {raw!r} is not min or max", raw_pos)
                fields["direction"] = direction
            else:
                raw, raw_pos = self.raw(",)", "a limit")
                if raw.lower() in {"all", "none"}:
                    fields["limit"] = None
                elif raw.isdigit() and int(raw) >= 1:
                    fields["limit"] = int(raw)
                else:
                    raise fail(f"Sort limit {raw!r} must be a whole number of at least 1 (or all)", raw_pos)
        if "source" not in fields:
            raise self.error("Sort needs set=<alias> naming the set to sort")
        if "direction" not in fields:
            raise self.error("Sort needs direction=min or direction=max")
        return SortOp.model_construct(**{"orderby": None, "limit": None, **fields})

    def output(self, pos: SourcePos) -> OutputOp:
        refs: list[AliasRef] = []
        if self.accept(")"):
            raise fail("Output() names no alias; write Output(<alias>, ...)", pos)
        while True:
            if self.at_quote():
                alias, _, alias_pos = self.string()
                alias = alias.strip()
            else:
                alias, alias_pos = self.ident("an alias to output")
            refs.append(AliasRef(alias=alias_or_fail(alias, alias_pos), pos=alias_pos))
            if self.accept(","):
                continue
            self.expect(")", "or ',' in Output")
            return OutputOp(aliases=refs, pos=pos)


def alias_or_fail(alias: str, pos: SourcePos) -> str:
    if not ALIAS_PATTERN.fullmatch(alias):
        raise fail(
            f"alias {alias[:70]!r} is not valid: use a letter followed by letters, digits or '_' "
            "(at most 64 characters)",
            pos,
        )
    return alias


def literal(raw: str) -> bool | int | float | str:
    text = raw.strip()
    if text.lower() in {"true", "false"}:
        return text.lower() == "true"
    if re.fullmatch(r"[-+]?\d+", text):
        return int(text)
    if re.fullmatch(r"[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?", text):
        return float(text)
    return text

