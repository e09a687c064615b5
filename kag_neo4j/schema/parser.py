"""A hand-written parser for KAG's indentation-based ``.schema`` language.

Grammar (one construct per line; nesting by indentation, see :mod:`kag_neo4j.schema.lexer`)::

    file        := 'namespace' NAME | 'namespace' '{{' NAME '}}'      (first line)
                   type*
    type        := NAME ['(' DISPLAY ')'] ':' KIND                      (column 1)
                 | NAME ['(' DISPLAY ')'] '->' PARENT ':'
        meta    := 'desc:' TEXT | 'hypernymPredicate:' NAME
                 | 'properties:' predicate* | 'relations:' predicate*
                 | ('autoRelate' | 'spreadable' | 'regular') ':' TEXT
    predicate   := [('IND' | 'CAU') '#'] NAME ['(' DISPLAY ')'] ':' VALUE_TYPE
        meta    := 'desc:' TEXT | 'constraint:' CONSTRAINTS | 'index:' INDEX
                 | 'rule:' '[[' ... ']]' | 'properties:' subproperty*
    subproperty := predicate without a nested 'properties:'
    CONSTRAINTS := item (',' item)*   item := NotNull | MultiValue | Enum="a,b" | Regular="re"
    INDEX       := Text | Vector | TextAndVector
    KIND        := EntityType | ConceptType | EventType | IndexType | StandardType
    VALUE_TYPE  := Text | Integer | Float | STD.NAME | NAME

The first problem stops the parse with a :class:`~kag_neo4j.schema.issues.SchemaFileError`
whose message reads ``FILE:LINE:COL: expected ..., found ...``. Names are checked with
:func:`~kag_neo4j.store.identifiers.check_identifier` here already; semantic checks (unknown
types, inheritance, constraint applicability) are done by :mod:`kag_neo4j.schema.validate`.
"""

from __future__ import annotations

import re
from pathlib import Path

from kag_neo4j.errors import SchemaError
from kag_neo4j.schema.issues import Location, SchemaFileError, fail
from kag_neo4j.schema.lexer import Line, Node, read_tree
from kag_neo4j.schema.models import (
    STANDARD_PREFIX,
    Constraints,
    IndexKind,
    PredicateDecl,
    SchemaDocument,
    Semantic,
    TypeDecl,
    TypeKind,
)
from kag_neo4j.store.identifiers import SYNTAX_RULE, check_identifier, identifier_problem

_NAME = re.compile(r"(?:[^\s():\-]|-(?!>))+")
_WORD = re.compile(r"[A-Za-z]+")
_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_KINDS = ", ".join(kind.value for kind in TypeKind)
_INDEXES = ", ".join(kind.value for kind in IndexKind)
_NAME_RULE = "letters, digits and underscores, starting with a letter"

TYPE_META = ("desc", "properties", "relations", "hypernymPredicate", "autoRelate", "spreadable", "regular")
PREDICATE_META = ("desc", "constraint", "index", "rule", "properties")
SUBPROPERTY_META = ("desc", "constraint", "index", "rule")
_ALL_META = frozenset(TYPE_META + PREDICATE_META)
_VALUE_TYPE_LIKE = re.compile(r"\s*(?:STD\.\w+|[A-Z]\w*)\s*")


def _name_rule(name: str) -> str | None:
    """What is wrong with ``name`` as a schema name, said the parser's way (``None``: nothing)."""
    problem = identifier_problem(name)
    return _NAME_RULE if problem == SYNTAX_RULE else problem


class _Cursor:
    """Scans one line left to right and reports precise errors."""

    def __init__(self, line: Line, start: int | None = None) -> None:
        self.line = line
        self.text = line.text
        self.pos = line.start if start is None else start
        self.end = line.end

    def skip_ws(self) -> None:
        while self.pos < self.end and self.text[self.pos] in " \t":
            self.pos += 1

    def at_end(self) -> bool:
        self.skip_ws()
        return self.pos >= self.end

    def peek(self, literal: str) -> bool:
        return self.text.startswith(literal, self.pos)

    def found(self, index: int | None = None) -> str:
        index = self.pos if index is None else index
        if index >= self.end:
            return "end of line"
        match = re.match(r"\S+", self.text[index : self.end])
        token = match.group(0) if match else self.text[index]
        return repr(token if len(token) <= 40 else token[:37] + "...")

    def error(self, expected: str, index: int | None = None, found: str | None = None) -> SchemaFileError:
        index = self.pos if index is None else index
        return fail(self.line.at(index), f"expected {expected}, found {found or self.found(index)}")

    def location(self, index: int | None = None) -> Location:
        return self.line.at(self.pos if index is None else index)

    def expect(self, literal: str, what: str | None = None) -> None:
        self.skip_ws()
        if not self.peek(literal):
            raise self.error(what or repr(literal))
        self.pos += len(literal)

    def expect_end(self) -> None:
        if not self.at_end():
            raise self.error("end of line")

    def token(self, pattern: re.Pattern[str] = _NAME) -> tuple[str, int]:
        self.skip_ws()
        match = pattern.match(self.text, self.pos, self.end)
        start = self.pos
        if not match:
            return "", start
        self.pos = match.end()
        return match.group(0), start

    def name(self, what: str) -> tuple[str, int]:
        token, start = self.token()
        rule = _name_rule(token) if token else _NAME_RULE
        if rule is not None:
            raise self.error(f"{what} ({rule})", start)
        return token, start

    def display_name(self) -> str | None:
        """An optional ``(Display Name)``; nested parentheses are allowed."""
        self.skip_ws()
        if not self.peek("("):
            return None
        opened = self.pos
        depth = 0
        for index in range(self.pos, self.end):
            char = self.text[index]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    self.pos = index + 1
                    return self.text[opened + 1 : index].strip() or None
        raise fail(self.line.at(self.end), f"expected ')' to close the display name opened at column {opened + 1}, "
                   "found end of line")

    def rest(self) -> str:
        self.skip_ws()
        value = self.text[self.pos : self.end].strip()
        self.pos = self.end
        return value

    def quoted(self) -> str:
        self.skip_ws()
        if self.pos >= self.end or self.text[self.pos] not in "\"'":
            raise self.error("a quoted string")
        quote = self.text[self.pos]
        opened = self.pos
        chars: list[str] = []
        index = self.pos + 1
        while index < self.end:
            char = self.text[index]
            if char == "\\" and index + 1 < self.end and self.text[index + 1] == quote:
                chars.append(quote)
                index += 2
                continue
            if char == quote:
                self.pos = index + 1
                return "".join(chars)
            chars.append(char)
            index += 1
        raise fail(self.line.at(self.end), f"expected the closing {quote} of the string opened at column "
                   f"{opened + 1}, found end of line")


# --------------------------------------------------------------------------- meta lines


def _meta_key(node: Node, allowed: tuple[str, ...], context: str) -> tuple[str, _Cursor]:
    cursor = _Cursor(node.line)
    expected = f"one of {', '.join(key + ':' for key in allowed)} ({context})"
    key, start = cursor.token(_WORD)
    cursor.skip_ws()
    if key not in allowed or not cursor.peek(":"):
        after_colon = cursor.text[cursor.pos + 1 : cursor.end] if cursor.peek(":") else ""
        looks_like_predicate = cursor.peek("(") or cursor.peek("#") or (
            key not in _ALL_META and _VALUE_TYPE_LIKE.fullmatch(after_colon) is not None
        )
        if looks_like_predicate:
            hint = "; predicates go under a 'properties:' or 'relations:' line" if "relations" in allowed else \
                "; sub-properties go under a 'properties:' line"
            if "properties" not in allowed:
                hint = "; sub-properties cannot be nested further"
        elif key in _ALL_META and cursor.peek(":"):
            hint = f"; '{key}:' is not allowed here"
        else:
            hint = ""
        raise cursor.error(expected + hint, start)
    cursor.pos += 1
    return key, cursor


def _no_children(node: Node, key: str) -> None:
    if node.children:
        child = node.children[0].line
        raise fail(
            child.at(child.start),
            f"expected a line at the indentation of '{key}:' or less ('{key}:' takes no nested lines), "
            f"found {_Cursor(child).found()}",
        )


def _once(seen: dict[str, int], key: str, line: Line) -> None:
    if key in seen:
        raise fail(line.at(line.start), f"expected each meta key once, found a second '{key}:' "
                   f"(the first is on line {seen[key]})")
    seen[key] = line.number


def _text_value(cursor: _Cursor, key: str) -> str:
    value = cursor.rest()
    if not value:
        raise cursor.error(f"a value after '{key}:'")
    return value


def _empty_block_value(cursor: _Cursor, key: str) -> None:
    if not cursor.at_end():
        raise cursor.error(f"end of line after '{key}:' (its entries go on the following, indented lines)")


def _constraints(cursor: _Cursor) -> Constraints:
    values: dict[str, object] = {}
    while True:
        word, start = cursor.token(_WORD)
        if word in ("NotNull", "MultiValue"):
            values["not_null" if word == "NotNull" else "multi_value"] = True
        elif word in ("Enum", "Regular"):
            cursor.expect("=", f"'=' after {word}")
            value_at = cursor.pos
            text = cursor.quoted()
            if word == "Enum":
                items = tuple(item.strip() for item in text.split(",") if item.strip())
                if not items:
                    raise cursor.error('at least one value in Enum="a,b,c"', value_at, found=repr(text))
                values["enum"] = items
            else:
                if not text:
                    raise cursor.error('a regular expression in Regular="..."', value_at, found="''")
                values["regular"] = text
        else:
            raise cursor.error('NotNull, MultiValue, Enum="a,b" or Regular="pattern"', start)
        if cursor.at_end():
            return Constraints.model_validate(values)
        cursor.expect(",", "',' between constraints or end of line")


def _index(cursor: _Cursor) -> IndexKind:
    word, start = cursor.token(_WORD)
    if word not in IndexKind._value2member_map_ or not cursor.at_end():
        raise cursor.error(f"an index kind ({_INDEXES})", start)
    return IndexKind(word)


def _rule(cursor: _Cursor) -> str | None:
    cursor.skip_ws()
    if cursor.line.rule is None:
        raise cursor.error("'[[' opening a rule block (rule: [[ ... ]])")
    cursor.pos = cursor.end  # the lexer cut the line after '[['
    return cursor.line.rule or None


# --------------------------------------------------------------------------- predicates


def _predicate(node: Node, *, nested: bool) -> PredicateDecl:
    cursor = _Cursor(node.line)
    token, start = cursor.token()
    semantic: Semantic | None = None
    name, name_at = token, start
    if "#" in token:
        prefix, name = token.split("#", 1)
        if prefix not in Semantic._value2member_map_:
            raise cursor.error("a semantic prefix IND# or CAU#", start, found=repr(prefix + "#"))
        semantic = Semantic(prefix)
        name_at = start + len(prefix) + 1
    what = "a sub-property name" if nested else "a property or relation name"
    rule = _name_rule(name) if name else _NAME_RULE
    if rule is not None:
        raise cursor.error(f"{what} ({rule})", name_at, found=repr(name) if name else None)
    if semantic is not None and nested:
        raise cursor.error("a sub-property name (IND#/CAU# prefixes are for predicates only)", start)
    display = cursor.display_name()
    cursor.expect(":", "':' followed by a value type")
    value_type, type_at = _value_type(cursor)
    cursor.expect_end()

    fields: dict[str, object] = {}
    seen: dict[str, int] = {}
    allowed = SUBPROPERTY_META if nested else PREDICATE_META
    context = f"meta of sub-property '{name}'" if nested else f"meta of '{name}'"
    for child in node.children:
        key, meta = _meta_key(child, allowed, context)
        _once(seen, key, child.line)
        if key == "properties":
            _empty_block_value(meta, key)
            fields["properties"] = tuple(_predicate(grand, nested=True) for grand in child.children)
            continue
        _no_children(child, key)
        if key == "desc":
            fields["description"] = _text_value(meta, key)
        elif key == "constraint":
            fields["constraints"] = _constraints(meta)
        elif key == "index":
            fields["index"] = _index(meta)
        elif key == "rule":
            fields["rule"] = _rule(meta)
            meta.expect_end()
    return PredicateDecl(
        name=name,
        semantic=semantic,
        display_name=display,
        value_type=value_type,
        location=node.line.at(start),
        value_type_location=node.line.at(type_at),
        **fields,  # type: ignore[arg-type]
    )


def _value_type(cursor: _Cursor) -> tuple[str, int]:
    cursor.skip_ws()
    start = cursor.pos
    match = re.compile(r"\S+").match(cursor.text, cursor.pos, cursor.end)
    token = match.group(0) if match else ""
    bare = token[len(STANDARD_PREFIX) :] if token.startswith(STANDARD_PREFIX) else token
    rule = _name_rule(bare) if token else _NAME_RULE
    if rule is not None:
        hint = "" if rule == _NAME_RULE else f"; {rule}"
        raise cursor.error(f"a value type (Text, Integer, Float, STD.<Name> or a type name{hint})", start)
    cursor.pos = match.end() if match else cursor.pos
    return token, start


# --------------------------------------------------------------------------- types


def _type(node: Node) -> TypeDecl:
    line = node.line
    cursor = _Cursor(line)
    name, start = cursor.name("a type name")
    display = cursor.display_name()
    cursor.skip_ws()
    kind: TypeKind | None = None
    parent: str | None = None
    parent_location: Location | None = None
    if cursor.peek("->"):
        cursor.pos += 2
        parent, parent_at = cursor.name("a parent type name")
        parent_location = line.at(parent_at)
        cursor.expect(":", "':' after the parent type")
    elif cursor.peek(":"):
        cursor.pos += 1
        word, word_at = cursor.token()
        if word not in TypeKind._value2member_map_:
            raise cursor.error(f"a type kind ({_KINDS})", word_at)
        kind = TypeKind(word)
    else:
        raise cursor.error("':' followed by a type kind, '->' followed by a parent type, or '(' display name ')'")
    cursor.expect_end()

    fields: dict[str, object] = {}
    extras: dict[str, str] = {}
    seen: dict[str, int] = {}
    for child in node.children:
        key, meta = _meta_key(child, TYPE_META, f"meta of type '{name}'")
        _once(seen, key, child.line)
        if key in ("properties", "relations"):
            _empty_block_value(meta, key)
            fields[key] = tuple(_predicate(grand, nested=False) for grand in child.children)
            continue
        _no_children(child, key)
        if key == "desc":
            fields["description"] = _text_value(meta, key)
        elif key == "hypernymPredicate":
            value, value_at = meta.name("a hypernym predicate such as isA")
            meta.expect_end()
            fields["hypernym_predicate"] = value
            fields["hypernym_location"] = child.line.at(value_at)
        else:
            extras[key] = _text_value(meta, key)
    return TypeDecl(
        name=name,
        display_name=display,
        kind=kind,
        parent=parent,
        extras=extras,
        location=line.at(start),
        parent_location=parent_location,
        **fields,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- file


def _namespace(node: Node, override: str | None) -> tuple[str | None, Location]:
    cursor = _Cursor(node.line)
    word, start = cursor.token(_WORD)
    if word != "namespace":
        raise cursor.error("'namespace NAME' as the first declaration", start)
    if cursor.pos < cursor.end and cursor.text[cursor.pos] not in " \t":
        raise cursor.error("a space after 'namespace'")
    cursor.skip_ws()
    at = cursor.pos
    placeholder = _PLACEHOLDER.match(cursor.text, cursor.pos, cursor.end)
    if placeholder:
        cursor.pos = placeholder.end()
        name: str | None = None
    else:
        name, at = cursor.name("a namespace name")
    cursor.expect_end()
    if node.children:
        child = node.children[0].line
        raise fail(child.at(child.start), f"expected a type declaration at column 1, found {_Cursor(child).found()} "
                   "indented under 'namespace'")
    if override is not None:
        check_identifier(override, what="namespace")
        name = override
    return name, node.line.at(at)


def parse_schema(text: str, *, source: str = "<schema>", namespace: str | None = None) -> SchemaDocument:
    """Parse schema ``text``; ``source`` names it in errors, ``namespace`` overrides the file's."""
    roots = read_tree(text, source)
    if not roots:
        raise fail(Location(file=source, line=1, column=1), "expected 'namespace NAME', found an empty schema")
    for root in roots:
        if root.line.indent:
            raise fail(root.line.at(root.line.start),
                       f"expected a declaration at column 1, found indented {_Cursor(root.line).found()}")
    name, location = _namespace(roots[0], namespace)
    types = tuple(_type(node) for node in roots[1:])
    return SchemaDocument(source=source, namespace=name, namespace_location=location, types=types)


def parse_file(path: str | Path, *, namespace: str | None = None) -> SchemaDocument:
    """Read and parse a ``.schema`` file (UTF-8)."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise SchemaError(f"schema file {file} does not exist; check the path") from exc
    except UnicodeDecodeError as exc:
        raise SchemaError(f"schema file {file} is not UTF-8 text ({exc}); save it as UTF-8") from exc
    except OSError as exc:
        raise SchemaError(f"cannot read schema file {file}: {exc}") from exc
    return parse_schema(text, source=str(file), namespace=namespace)
