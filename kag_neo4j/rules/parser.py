"""Parse KAG rule files (``concept.rule``, ``rule: [[ … ]]`` blocks of ``.schema`` files, plain
files of ``Define`` rules and ``MATCH … RETURN`` queries) into :mod:`kag_neo4j.rules.ast`.

Grammar (keywords are case-insensitive; line breaks are whitespace)::

    file       := ['namespace' NAME] (header? block | define | query)*
    header     := typeref [':' [typeref]]                  (concept.rule: `TaxOfRiskApp`/`赌博应用`:)
    block      := 'rule' ':' '[' '[' define* ']' ']'
    define     := 'Define' node '-' '[' NAME ':' NAME ']' '->' node '{' section* '}'
    section    := ('Structure' '{' path (','? path)* '}') | ('Constraint' '{' item* '}')
                | ('Action' '{' action* '}')
    path       := node (edge node)*
    node       := '(' [NAME] [':' typeref ('|' typeref)*] ')'
    typeref    := (NAME | `quoted`) ['.' NAME] ['/' (NAME | `quoted`)]     (Type, NS.Type, Type/concept)
    edge       := '-' '[' [NAME] [':' NAME ('|' NAME)*] ']' ('->' | '-') | '<-' '[' … ']' '-'
    item       := NAME ['(' STRING ')'] (':' expr | '=' expr) | expr
    action     := [NAME '='] 'createNodeInstance' '(' 'type' '=' typeref ',' 'value' '=' map ')'
                | 'createEdgeInstance' '(' 'src' '=' NAME ',' 'dst' '=' NAME ',' 'type' '=' NAME ',' 'value' '=' map ')'
    map        := '{' (NAME '=' expr ','?)* '}'
    query      := 'MATCH' path (',' path)* ['WHERE' expr] 'RETURN' expr ['AS' NAME] (',' …)*
    expr       := or; or := and ('or'|'||' and)*; and := not ('and'|'&&' not)*; not := ('not'|'!') not | cmp
    cmp        := sum [('=='|'!='|'<>'|'<'|'<='|'>'|'>='|'like'|'in') sum]
    sum        := product (('+'|'-') product)*; product := unary (('*'|'/'|'%') unary)*; unary := '-' unary | primary
    primary    := number | string | 'null' | 'true' | 'false' | '[' expr,* ']' | '(' expr ')'
                | 'group' '(' NAME,* ')' '.' NAME '(' expr? ')' | NAME '(' expr,* ')' | NAME '.' NAME | NAME
"""

from __future__ import annotations

import re
from pathlib import Path

from kag_neo4j.rules import ast
from kag_neo4j.rules.errors import RuleSyntaxError
from kag_neo4j.rules.lexer import Token, tokenize
from kag_neo4j.schema.issues import Location

SECTIONS = ("structure", "constraint", "action")
_COMPARISONS = ("==", "!=", "<>", "<", "<=", ">", ">=")
_KEYWORDS = frozenset({"and", "or", "not", "like", "in", "null", "true", "false"})


class _Parser:
    def __init__(self, text: str, source: str, start: int = 0, end: int | None = None) -> None:
        self.text = text
        self.source = source
        self.tokens = tokenize(text, source, start, end)
        self.index = 0
        self.namespace: str | None = None

    # ------------------------------------------------------------------ cursor
    @property
    def tok(self) -> Token:
        return self.tokens[self.index]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.index + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        token = self.tok
        if token.kind != "end":
            self.index += 1
        return token

    def error(self, expected: str, token: Token | None = None) -> RuleSyntaxError:
        token = token or self.tok
        return RuleSyntaxError(token.location, f"expected {expected}, found {token.describe()}")

    def is_op(self, *ops: str, token: Token | None = None) -> bool:
        token = token or self.tok
        return token.kind == "op" and token.text in ops

    def is_word(self, *words: str, token: Token | None = None) -> bool:
        token = token or self.tok
        return token.kind == "name" and token.text.casefold() in words

    def expect_op(self, op: str, expected: str | None = None) -> Token:
        if not self.is_op(op):
            raise self.error(expected or f"'{op}'")
        return self.advance()

    def expect_word(self, word: str, expected: str | None = None) -> Token:
        if not self.is_word(word):
            raise self.error(expected or f"'{word}'")
        return self.advance()

    def expect_name(self, expected: str = "a name") -> Token:
        if self.tok.kind != "name" or self.tok.text.casefold() in _KEYWORDS:
            raise self.error(expected)
        return self.advance()

    # ------------------------------------------------------------------ file
    def file(self) -> ast.RuleFile:
        rules: list[ast.Rule] = []
        queries: list[ast.Query] = []
        if self.is_word("namespace"):
            self.advance()
            self.namespace = str(self.expect_name("a namespace name after 'namespace'").value)
        while self.tok.kind != "end":
            if self.is_word("define"):
                rules.append(self.define())
            elif self.is_word("match"):
                queries.append(self.query())
            elif self.is_word("rule") and self.is_op(":", token=self.peek()):
                rules.extend(self.block())
            elif self.tok.kind in ("name", "quoted"):
                self.header()
                if not (self.is_word("rule") and self.is_op(":", token=self.peek())):
                    raise self.error("'rule: [[' after the concept name")
                rules.extend(self.block())
            else:
                raise self.error("'Define', 'MATCH', 'rule: [[' or a concept name such as `Type`/`name`:")
        return ast.RuleFile(source=self.source, namespace=self.namespace, rules=tuple(rules), queries=tuple(queries))

    def header(self) -> None:
        self.typeref()
        if self.is_op(":"):
            self.advance()
            if not (self.is_word("rule") and self.is_op(":", token=self.peek())):
                self.typeref()

    def block(self) -> list[ast.Rule]:
        self.advance()  # rule
        self.expect_op(":")
        self.expect_op("[", "'[[' opening the rule block")
        self.expect_op("[", "'[[' opening the rule block")
        rules: list[ast.Rule] = []
        while not self.is_op("]"):
            if not self.is_word("define"):
                raise self.error("'Define' or ']]' closing the rule block")
            rules.append(self.define())
        self.advance()
        self.expect_op("]", "']]' closing the rule block")
        return rules

    # ------------------------------------------------------------------ define
    def define(self) -> ast.Rule:
        start = self.advance()  # Define
        subject = self.node()
        predicate = self.head_edge()
        obj = self.node()
        head = ast.RuleHead(subject=subject, predicate=predicate, object=obj)
        self.expect_op("{", "'{' opening the rule body")
        sections: dict[str, object] = {}
        while not self.is_op("}"):
            if not self.is_word(*SECTIONS):
                raise self.error("'Structure', 'Constraint', 'Action' or '}' closing the rule")
            word = self.advance()
            key = word.text.casefold()
            if key in sections:
                raise RuleSyntaxError(word.location, f"expected one {word.text} block per rule, found a second one")
            self.expect_op("{", f"'{{' opening the {word.text} block")
            if key == "structure":
                sections[key] = self.structure()
            elif key == "constraint":
                sections[key] = self.constraints()
            else:
                sections[key] = self.actions()
            self.expect_op("}", f"'}}' closing the {word.text} block")
        close = self.advance()
        text = self.text[start.offset : close.offset + 1]
        return ast.Rule(
            head=head,
            structure=tuple(sections.get("structure", ())),  # type: ignore[arg-type]
            constraint=tuple(sections.get("constraint", ())),  # type: ignore[arg-type]
            action=tuple(sections["action"]) if "action" in sections else None,  # type: ignore[arg-type]
            text=text,
            namespace=self.namespace,
            location=start.location,
        )

    def head_edge(self) -> ast.EdgePattern:
        start = self.expect_op("-", "'-[' after the subject of the rule")
        self.expect_op("[")
        var = str(self.expect_name("the predicate variable (p in -[p:relation]->)").value)
        self.expect_op(":", "':' and the predicate name, as in -[p:relation]->")
        name = self.name_or_quoted("the predicate name")
        self.expect_op("]")
        self.expect_op("->", "'->': a rule defines a directed predicate")
        return ast.EdgePattern(var=var, types=(name,), direction="out", location=start.location)

    def name_or_quoted(self, expected: str) -> str:
        if self.tok.kind == "quoted":
            return str(self.advance().value)
        return str(self.expect_name(expected).value)

    def typeref(self) -> ast.TypeRef:
        token = self.tok
        if token.kind == "quoted":
            raw = str(self.advance().value)
        elif token.kind == "name" and token.text.casefold() not in _KEYWORDS:
            raw = str(self.advance().value)
            while self.is_op(".") and self.peek().kind == "name":
                self.advance()
                raw += "." + str(self.advance().value)
        else:
            raise self.error("a type name")
        namespace, _, name = raw.rpartition(".")
        if not name or (namespace and not re.fullmatch(r"[^\W\d]\w*", namespace)):
            raise RuleSyntaxError(token.location, f"expected a type name such as Type or Namespace.Type, found {token.describe()}")
        concept: str | None = None
        if self.is_op("/"):
            self.advance()
            if self.tok.kind not in ("quoted", "name"):
                raise self.error("a concept name after '/' (Type/`concept`)")
            concept = str(self.advance().value)
        return ast.TypeRef(name=name, namespace=namespace or None, concept=concept, location=token.location)

    def node(self) -> ast.NodePattern:
        start = self.expect_op("(", "'(' opening a node pattern")
        var: str | None = None
        if self.tok.kind == "name" and not self.is_op(":"):
            var = str(self.expect_name("a node variable").value)
        types: list[ast.TypeRef] = []
        if self.is_op(":"):
            self.advance()
            types.append(self.typeref())
            while self.is_op("|"):
                self.advance()
                types.append(self.typeref())
        self.expect_op(")", "')' closing the node pattern")
        return ast.NodePattern(var=var, types=tuple(types), location=start.location)

    def edge(self) -> ast.EdgePattern:
        start = self.tok
        incoming = self.is_op("<-")
        if not (incoming or self.is_op("-")):
            raise self.error("'-[' or '<-['")
        self.advance()
        self.expect_op("[", "'[' opening the edge pattern")
        var: str | None = None
        if self.tok.kind == "name":
            var = str(self.expect_name("an edge variable").value)
        types: list[str] = []
        if self.is_op(":"):
            self.advance()
            types.append(self.name_or_quoted("a relation name"))
            while self.is_op("|"):
                self.advance()
                types.append(self.name_or_quoted("a relation name"))
        self.expect_op("]", "']' closing the edge pattern")
        if incoming:
            self.expect_op("-", "'-' after ']' of an incoming edge <-[…]-")
            direction = "in"
        elif self.is_op("->"):
            self.advance()
            direction = "out"
        elif self.is_op("-"):
            self.advance()
            direction = "both"
        else:
            raise self.error("'->' or '-' after ']'")
        return ast.EdgePattern(var=var, types=tuple(types), direction=direction, location=start.location)

    def path(self) -> ast.PathPattern:
        nodes = [self.node()]
        edges: list[ast.EdgePattern] = []
        while self.is_op("-", "<-"):
            edges.append(self.edge())
            nodes.append(self.node())
        return ast.PathPattern(nodes=tuple(nodes), edges=tuple(edges))

    def structure(self) -> list[ast.PathPattern]:
        paths: list[ast.PathPattern] = []
        while not self.is_op("}"):
            if not self.is_op("("):
                raise self.error("a path pattern such as (s)-[:relation]->(o:Type), or '}'")
            paths.append(self.path())
            if self.is_op(","):
                self.advance()
        return paths

    # ------------------------------------------------------------------ constraint
    def constraints(self) -> list[ast.Condition | ast.Assignment]:
        items: list[ast.Condition | ast.Assignment] = []
        while not self.is_op("}"):
            items.append(self.item())
        return items

    def item(self) -> ast.Condition | ast.Assignment:
        token = self.tok
        if token.kind == "name" and token.text.casefold() not in _KEYWORDS:
            description: str | None = None
            after = 1
            if (self.is_op("(", token=self.peek()) and self.peek(2).kind == "string"
                    and self.is_op(")", token=self.peek(3)) and self.is_op(":", "=", token=self.peek(4))):
                description = str(self.peek(2).value)
                after = 4
            marker = self.peek(after)
            if self.is_op(":", "=", token=marker):
                for _ in range(after + 1):
                    self.advance()
                expr = self.expr()
                if marker.text == ":":
                    return ast.Condition(name=token.text, description=description, expr=expr, location=token.location)
                return ast.Assignment(name=token.text, description=description, expr=expr, location=token.location)
        return ast.Condition(expr=self.expr(), location=token.location)

    # ------------------------------------------------------------------ action
    def actions(self) -> list[ast.CreateNode | ast.CreateEdge]:
        items: list[ast.CreateNode | ast.CreateEdge] = []
        while not self.is_op("}"):
            start = self.tok
            var: str | None = None
            if self.tok.kind == "name" and self.is_op("=", token=self.peek()):
                var = str(self.advance().value)
                self.advance()
            if self.is_word("createnodeinstance"):
                items.append(self.create_node(var, start.location))
            elif self.is_word("createedgeinstance"):
                items.append(self.create_edge(var, start.location))
            else:
                raise self.error("createNodeInstance(…) or createEdgeInstance(…)")
        return items

    def _arguments(self, allowed: dict[str, str]) -> dict[str, tuple[Token, object]]:
        self.advance()
        self.expect_op("(")
        found: dict[str, tuple[Token, object]] = {}
        while not self.is_op(")"):
            key = self.expect_name(f"an argument name ({', '.join(allowed)})")
            name = key.text.casefold()
            if name not in allowed:
                raise RuleSyntaxError(key.location, f"expected one of {', '.join(allowed)}, found '{key.text}'")
            if name in found:
                raise RuleSyntaxError(key.location, f"expected each argument once, found a second '{key.text}'")
            self.expect_op("=", f"'=' after {key.text}")
            kind = allowed[name]
            value: object
            if kind == "type":
                value = self.typeref()
            elif kind == "map":
                value = self.value_map()
            else:
                value = self.name_or_quoted(f"a name for {key.text}")
            found[name] = (key, value)
            if self.is_op(","):
                self.advance()
        close = self.advance()
        missing = [name for name in allowed if name not in found and name != "value"]
        if missing:
            raise RuleSyntaxError(close.location, f"expected the argument {missing[0]}=…, found ')'")
        return found

    def value_map(self) -> tuple[tuple[str, ast.Expr], ...]:
        self.expect_op("{", "'{' opening the value map")
        values: list[tuple[str, ast.Expr]] = []
        seen: set[str] = set()
        while not self.is_op("}"):
            key = self.expect_name("a property name in the value map")
            if key.text in seen:
                raise RuleSyntaxError(key.location, f"expected each property once, found a second '{key.text}'")
            seen.add(key.text)
            self.expect_op("=", f"'=' after {key.text}")
            values.append((key.text, self.expr()))
            if self.is_op(","):
                self.advance()
        self.advance()
        return tuple(values)

    def create_node(self, var: str | None, location: Location) -> ast.CreateNode:
        args = self._arguments({"type": "type", "value": "map"})
        return ast.CreateNode(var=var, type=args["type"][1], values=args.get("value", (None, ()))[1],  # type: ignore[arg-type]
                              location=location)

    def create_edge(self, var: str | None, location: Location) -> ast.CreateEdge:
        args = self._arguments({"src": "name", "dst": "name", "type": "name", "value": "map"})
        return ast.CreateEdge(var=var, src=args["src"][1], dst=args["dst"][1], type=args["type"][1],  # type: ignore[arg-type]
                              values=args.get("value", (None, ()))[1], location=location)  # type: ignore[arg-type]

    # ------------------------------------------------------------------ query
    def query(self) -> ast.Query:
        start = self.advance()
        paths = [self.path()]
        while self.is_op(","):
            self.advance()
            paths.append(self.path())
        where = None
        if self.is_word("where"):
            self.advance()
            where = self.expr()
        self.expect_word("return", "'RETURN' (or ',' and another path, or 'WHERE')")
        returns: list[ast.ReturnItem] = []
        while True:
            token = self.tok
            expr = self.expr()
            alias = None
            if self.is_word("as"):
                self.advance()
                alias = str(self.expect_name("a name after AS").value)
            returns.append(ast.ReturnItem(expr=expr, alias=alias, location=token.location))
            if not self.is_op(","):
                break
            self.advance()
        last = self.tokens[self.index - 1]
        text = self.text[start.offset : last.offset + len(last.text)]
        return ast.Query(match=tuple(paths), where=where, returns=tuple(returns), text=text, location=start.location)

    # ------------------------------------------------------------------ expressions
    def expr(self) -> ast.Expr:
        return self.or_expr()

    def or_expr(self) -> ast.Expr:
        left = self.and_expr()
        while self.is_word("or") or self.is_op("||"):
            token = self.advance()
            left = ast.Binary(op="or", left=left, right=self.and_expr(), location=token.location)
        return left

    def and_expr(self) -> ast.Expr:
        left = self.not_expr()
        while self.is_word("and") or self.is_op("&&"):
            token = self.advance()
            left = ast.Binary(op="and", left=left, right=self.not_expr(), location=token.location)
        return left

    def not_expr(self) -> ast.Expr:
        if self.is_word("not") or self.is_op("!"):
            token = self.advance()
            return ast.Unary(op="not", operand=self.not_expr(), location=token.location)
        return self.comparison()

    def comparison(self) -> ast.Expr:
        left = self.sum()
        token = self.tok
        if self.is_op(*_COMPARISONS):
            self.advance()
            op = "!=" if token.text == "<>" else token.text
            return ast.Binary(op=op, left=left, right=self.sum(), location=token.location)  # type: ignore[arg-type]
        if self.is_op("<-"):  # "a<-1" is "a < -1"
            self.advance()
            right = ast.Unary(op="-", operand=self.sum(), location=token.location)
            return ast.Binary(op="<", left=left, right=right, location=token.location)
        if self.is_word("like", "in"):
            self.advance()
            return ast.Binary(op=token.text.casefold(), left=left, right=self.sum(), location=token.location)  # type: ignore[arg-type]
        return left

    def sum(self) -> ast.Expr:
        left = self.product()
        while self.is_op("+", "-"):
            token = self.advance()
            left = ast.Binary(op=token.text, left=left, right=self.product(), location=token.location)  # type: ignore[arg-type]
        return left

    def product(self) -> ast.Expr:
        left = self.unary()
        while self.is_op("*", "/", "%"):
            token = self.advance()
            left = ast.Binary(op=token.text, left=left, right=self.unary(), location=token.location)  # type: ignore[arg-type]
        return left

    def unary(self) -> ast.Expr:
        if self.is_op("-"):
            token = self.advance()
            return ast.Unary(op="-", operand=self.unary(), location=token.location)
        return self.primary()

    def primary(self) -> ast.Expr:
        token = self.tok
        if token.kind in ("number", "string"):
            self.advance()
            return ast.Literal_(value=token.value, location=token.location)
        if self.is_word("null", "true", "false"):
            self.advance()
            word = token.text.casefold()
            return ast.Literal_(value=None if word == "null" else word == "true", location=token.location)
        if self.is_op("["):
            self.advance()
            items = self.expressions("]", "',' or ']' closing the list")
            return ast.ListExpr(items=items, location=token.location)
        if self.is_op("("):
            self.advance()
            inner = self.expr()
            self.expect_op(")", "')' closing the parenthesis")
            return inner
        if token.kind == "name" and token.text.casefold() not in _KEYWORDS:
            self.advance()
            if token.text.casefold() == "group" and self.is_op("("):
                return self.aggregate(token)
            if self.is_op("("):
                self.advance()
                args = self.expressions(")", "',' or ')' closing the arguments")
                return ast.Call(name=token.text, args=args, location=token.location)
            if self.is_op("."):
                self.advance()
                key = self.name_or_quoted(f"a property name after '{token.text}.'")
                return ast.Property(var=token.text, key=key, location=token.location)
            return ast.Name(name=token.text, location=token.location)
        raise self.error("a value, a name or '('")

    def expressions(self, close: str, expected: str) -> tuple[ast.Expr, ...]:
        """``expr (',' expr)*`` up to and including ``close`` (which may come at once)."""
        items: list[ast.Expr] = []
        while not self.is_op(close):
            items.append(self.expr())
            if not self.is_op(","):
                break
            self.advance()
        self.expect_op(close, expected)
        return tuple(items)

    def aggregate(self, start: Token) -> ast.Aggregate:
        self.advance()  # (
        keys: list[str] = []
        while not self.is_op(")"):
            keys.append(str(self.expect_name("a variable to group by").value))
            if not self.is_op(","):
                break
            self.advance()
        self.expect_op(")", "',' or ')' closing group(…)")
        if not keys:
            raise RuleSyntaxError(start.location, "expected at least one variable in group(…), found none")
        self.expect_op(".", "'.' and an aggregate after group(…), as in group(s).count(x)")
        func = self.expect_name("an aggregate (count, sum, avg, min, max)")
        self.expect_op("(", f"'(' after {func.text}")
        if self.is_op(")"):
            raise self.error(f"what to {func.text}, as in {func.text}(x)")
        arg = self.expr()
        self.expect_op(")", f"')' closing {func.text}(…)")
        return ast.Aggregate(keys=tuple(keys), func=func.text, arg=arg, location=start.location)


def parse_rules(text: str, source: str = "<rules>") -> ast.RuleFile:
    """Parse a rule file's text (``concept.rule``, a file of ``Define`` rules or queries)."""
    return _Parser(text, source).file()


def parse_region(text: str, source: str, start: int, end: int, namespace: str | None) -> list[ast.Rule]:
    """Parse the ``Define`` rules in ``text[start:end]`` (a schema file's ``rule: [[ … ]]`` body),
    reporting the locations of ``text`` itself."""
    parser = _Parser(text, source, start, end)
    parser.namespace = namespace
    rules: list[ast.Rule] = []
    while parser.tok.kind != "end":
        if not parser.is_word("define"):
            raise parser.error("'Define'")
        rules.append(parser.define())
    return rules


def read_text(path: Path) -> str:
    from kag_neo4j.rules.errors import RuleError

    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError as exc:
        raise RuleError(f"{path}: no such rule file; check the path") from exc
    except UnicodeDecodeError as exc:
        raise RuleError(f"{path}: not UTF-8 text; save the rule file as UTF-8") from exc
