"""The Neo4j Browser pieces of `kag-neo4j trace --browser`: the GraSS style sheet parses and styles the
trace's labels and relationship types; the `:param` line quotes any id into one valid command."""

from __future__ import annotations

import re

import pytest

from kag_neo4j.browser import cypher_string, param_line, style_sheet

#: the properties Neo4j Browser's GraSS knows, each with the shape of its value
_COLOR = re.compile(r"^#[0-9A-Fa-f]{6}$")
_SIZE = re.compile(r"^\d+(?:\.\d+)?px$")
_CAPTION = re.compile(r'^"(?:\{[A-Za-z_][A-Za-z0-9_]*\}|<type>|<id>)"$')
PROPERTIES = {
    "node": {"diameter": _SIZE, "color": _COLOR, "border-color": _COLOR, "border-width": _SIZE,
             "text-color-internal": _COLOR, "font-size": _SIZE, "caption": _CAPTION},
    "relationship": {"color": _COLOR, "shaft-width": _SIZE, "font-size": _SIZE, "padding": _SIZE,
                     "text-color-external": _COLOR, "text-color-internal": _COLOR, "caption": _CAPTION},
}
_SELECTOR = re.compile(r"^(?P<kind>node|relationship)(?:\.(?P<name>[A-Za-z_][A-Za-z0-9_]*))?$")


def _split(text: str, stop: str) -> tuple[str, str]:
    """``text`` up to the first ``stop`` outside double quotes, and what follows it."""
    quoted = False
    for index, char in enumerate(text):
        if char == '"':
            quoted = not quoted
        elif char == stop and not quoted:
            return text[:index], text[index + 1:]
    raise AssertionError(f"no {stop!r} after {text.strip()[:60]!r}")


def parse_grass(text: str) -> dict[str, dict[str, str]]:
    """selector -> {property: value}; raises AssertionError on anything GraSS would not read."""
    rules: dict[str, dict[str, str]] = {}
    rest = text
    while rest.strip():
        selector, rest = _split(rest, "{")
        body, rest = _split(rest, "}")
        selector = selector.strip()
        kind = _SELECTOR.fullmatch(selector)
        assert kind, f"bad selector {selector!r}"
        assert selector not in rules, f"selector {selector!r} twice"
        props: dict[str, str] = {}
        while body.strip():
            declaration, body = _split(body, ";")  # every declaration ends with ';'
            key, sep, value = declaration.partition(":")
            key, value = key.strip(), value.strip()
            assert sep and key in PROPERTIES[kind["kind"]], f"{selector}: unknown property {key!r}"
            assert PROPERTIES[kind["kind"]][key].fullmatch(value), f"{selector}: bad {key} value {value!r}"
            props[key] = value
        rules[selector] = props
    return rules


def test_the_style_sheet_parses_and_styles_every_part_of_a_trace() -> None:
    rules = parse_grass(style_sheet())
    assert {"node", "relationship"} <= set(rules)
    for label in ("KagRun", "KagStep", "Chunk", "Document", "Entity", "Concept"):
        assert {"color", "caption"} <= set(rules[f"node.{label}"]), label
    for rel_type in ("HAS_STEP", "DEPENDS_ON", "USED", "CITES", "PART_OF", "RELATED"):
        assert {"color", "caption"} <= set(rules[f"relationship.{rel_type}"]), rel_type
    colours = [rules[f"node.{label}"]["color"] for label in ("KagRun", "KagStep", "Chunk", "Document", "Entity",
                                                            "Concept")]
    assert len(set(colours)) == len(colours), "each kind of node reads at a glance: its own colour"


def test_the_parser_refuses_what_browser_would_not_read() -> None:
    for broken in ("node.KagRun { colour: #FFFFFF; }", "node.KagRun { color: red; }", "node { caption: {name}; }",
                   "edge { color: #FFFFFF; }", "node { color: #FFFFFF }", "stray node { color: #FFFFFF; }"):
        with pytest.raises(AssertionError):
            parse_grass(broken)


@pytest.mark.parametrize("run_id", ["0123abcdef", "x' }) DETACH DELETE n //", "back\\slash'", "two\nlines\r\x00",
                                    "\u2028sep", "'''", "ünï-cødé 问题"])
def test_the_param_line_is_one_browser_command_with_the_id_quoted(run_id: str) -> None:
    line = param_line(run_id)
    assert "\n" not in line and "\r" not in line and "\u2028" not in line
    match = re.fullmatch(r":param run_id => '((?:[^'\\]|\\.)*)'", line)
    assert match, line
    literal = match[1]
    unescaped = re.sub(r"\\u([0-9a-f]{4})|\\(.)",
                       lambda m: chr(int(m[1], 16)) if m[1] else {"n": "\n", "r": "\r", "t": "\t"}.get(m[2], m[2]),
                       literal)
    assert unescaped == run_id
    assert cypher_string(run_id) == f"'{literal}'"
