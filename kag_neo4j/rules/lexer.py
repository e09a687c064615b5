"""Tokens of the rule language.

Names are Unicode letters, digits and underscores (``deviceNum``, ``赌博``); a name in
backticks (`` `赌博应用` ``) may hold anything but a backtick or a line break. Strings are in
single or double quotes with ``\\`` escapes. Comments run from ``//`` to the end of the line or
between ``/*`` and ``*/``. Line breaks are whitespace: the parser knows where a statement ends.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import Literal

from kag_neo4j.rules.errors import RuleSyntaxError
from kag_neo4j.schema.issues import Location

TokenKind = Literal["name", "quoted", "string", "number", "op", "end"]

#: operators and punctuation, longest first
_OPERATORS = (
    "->", "<-", "==", "!=", "<>", "<=", ">=", "&&", "||",
    "(", ")", "[", "]", "{", "}", ",", ":", ".", "/", "=", "<", ">", "+", "-", "*", "%", "!", "|",
)
_NAME = re.compile(r"[^\W\d]\w*", re.UNICODE)
_NUMBER = re.compile(r"\d+(\.\d+)?([eE][+-]?\d+)?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "`": "`"}


@dataclass(frozen=True)
class Token:
    kind: TokenKind
    text: str
    value: str | int | float | None
    offset: int
    location: Location

    def describe(self) -> str:
        if self.kind == "end":
            return "the end of the rule"
        if self.kind == "string":
            return f"string {self.text}"
        return f"'{self.text}'"


class _Positions:
    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def at(self, offset: int) -> Location:
        line = bisect.bisect_right(self.starts, offset) - 1
        return Location(file=self.source, line=line + 1, column=offset - self.starts[line] + 1)


def tokenize(text: str, source: str, start: int = 0, end: int | None = None) -> list[Token]:
    """The tokens of ``text[start:end]``, located in ``text`` (so a rule inside a schema file
    reports the schema file's own lines and columns); the last token has kind ``end``."""
    stop = len(text) if end is None else end
    positions = _Positions(text, source)
    tokens: list[Token] = []
    index = start
    while True:
        while index < stop:
            char = text[index]
            if char in " \t\r\n\ufeff":
                index += 1
            elif text.startswith("//", index):
                newline = text.find("\n", index, stop)
                index = stop if newline < 0 else newline
            elif text.startswith("/*", index):
                close = text.find("*/", index + 2, stop)
                if close < 0:
                    raise RuleSyntaxError(positions.at(index), "expected '*/' closing this comment, found the end of the rule")
                index = close + 2
            else:
                break
        if index >= stop:
            tokens.append(Token("end", "", None, stop, positions.at(stop)))
            return tokens
        where = positions.at(index)
        char = text[index]
        if char == "`":
            close = index + 1
            while close < stop and text[close] not in "`\n":
                close += 1
            if close >= stop or text[close] != "`":
                raise RuleSyntaxError(where, "expected '`' closing this quoted name, found the end of the line")
            if close == index + 1:
                raise RuleSyntaxError(where, "expected a name between the backticks, found ``")
            tokens.append(Token("quoted", text[index : close + 1], text[index + 1 : close], index, where))
            index = close + 1
            continue
        if char in "'\"":
            value, after = _string(text, index, stop, positions)
            tokens.append(Token("string", text[index:after], value, index, where))
            index = after
            continue
        match = _NAME.match(text, index, stop)
        if match:
            tokens.append(Token("name", match.group(0), match.group(0), index, where))
            index = match.end()
            continue
        match = _NUMBER.match(text, index, stop)
        if match:
            raw = match.group(0)
            number: int | float = float(raw) if (match.group(1) or match.group(2)) else int(raw)
            tokens.append(Token("number", raw, number, index, where))
            index = match.end()
            continue
        for op in _OPERATORS:
            if text.startswith(op, index):
                tokens.append(Token("op", op, op, index, where))
                index += len(op)
                break
        else:
            raise RuleSyntaxError(where, f"expected a name, a value or an operator, found {char!r}")


def _string(text: str, index: int, stop: int, positions: _Positions) -> tuple[str, int]:
    quote = text[index]
    out: list[str] = []
    cursor = index + 1
    while cursor < stop:
        char = text[cursor]
        if char == quote:
            return "".join(out), cursor + 1
        if char == "\n":
            break
        if char == "\\" and cursor + 1 < stop:
            nxt = text[cursor + 1]
            out.append(_ESCAPES.get(nxt, "\\" + nxt))
            cursor += 2
            continue
        out.append(char)
        cursor += 1
    raise RuleSyntaxError(positions.at(index), f"expected {quote} closing this string, found the end of the line")
