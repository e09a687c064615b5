"""Split a ``.schema`` text into an indentation tree of lines.

* Blank lines and full-line comments (first non-blank character ``#``) are skipped.
* Indentation is measured with tabs expanded to the next multiple of 4 columns, so files that
  mix tabs and spaces (as KAG's own examples do) still nest correctly. Nesting is relative: a
  line belongs to the nearest previous line that is less indented.
* ``rule: [[`` opens a rule block that runs, verbatim, up to the first line ending in ``]]``;
  its lines are not part of the tree but attached (dedented) to the ``rule:`` line.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

from kag_neo4j.schema.issues import Location, fail

TAB_WIDTH = 4

_RULE_OPEN = re.compile(r"rule\s*:\s*\[\s*\[")
_RULE_CLOSE = re.compile(r"\]\s*\]\s*$")


@dataclass
class Line:
    """One meaningful source line."""

    source: str
    number: int
    text: str
    start: int
    indent: int
    rule: str | None = None
    rule_column: int | None = None

    @property
    def end(self) -> int:
        """Index just past the last non-blank character."""
        return len(self.text.rstrip())

    def at(self, index: int) -> Location:
        """The location of character ``index`` (0-based) of this line."""
        return Location(file=self.source, line=self.number, column=index + 1)


@dataclass
class Node:
    """A line and the lines nested under it."""

    line: Line
    children: list[Node] = field(default_factory=list)


def _indent_width(prefix: str) -> int:
    width = 0
    for char in prefix:
        width = (width // TAB_WIDTH + 1) * TAB_WIDTH if char == "\t" else width + 1
    return width


def _dedent_rule(lines: list[str]) -> str:
    body = textwrap.dedent("\n".join(line.expandtabs(TAB_WIDTH).rstrip() for line in lines))
    return body.strip("\n")


def _lines(text: str, source: str) -> list[Line]:
    raw = text.lstrip("\ufeff").splitlines()
    lines: list[Line] = []
    index = 0
    while index < len(raw):
        text_line = raw[index]
        number = index + 1
        index += 1
        stripped = text_line.lstrip(" \t")
        if not stripped.strip() or stripped.startswith("#"):
            continue
        start = len(text_line) - len(stripped)
        line = Line(source, number, text_line, start, _indent_width(text_line[:start]))
        opened = _RULE_OPEN.match(text_line, start)
        if opened:
            line.rule_column = text_line.index("[", start)
            rest = text_line[opened.end() :]
            closed = _RULE_CLOSE.search(rest)
            if closed:
                line.rule = _dedent_rule([rest[: closed.start()].strip()])
            else:
                body = [rest.strip()] if rest.strip() else []
                while True:
                    if index >= len(raw):
                        raise fail(
                            line.at(line.rule_column),
                            "expected ']]' to close the rule block opened here, found the end of the file",
                        )
                    inner = raw[index]
                    index += 1
                    closed = _RULE_CLOSE.search(inner)
                    if closed:
                        if inner[: closed.start()].strip():
                            body.append(inner[: closed.start()])
                        break
                    body.append(inner)
                line.rule = _dedent_rule(body)
            # Keep only ``rule:`` on the tree line; the parser checks nothing follows the block.
            line.text = text_line[: opened.end()]
        lines.append(line)
    return lines


def read_tree(text: str, source: str) -> list[Node]:
    """The top-level nodes of ``text``; nested lines hang off their parents."""
    roots: list[Node] = []
    stack: list[Node] = []
    for line in _lines(text, source):
        node = Node(line)
        while stack and stack[-1].line.indent >= line.indent:
            stack.pop()
        (stack[-1].children if stack else roots).append(node)
        stack.append(node)
    return roots
