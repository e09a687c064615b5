"""Errors of the rule language: every message names the file, line and column at fault."""

from __future__ import annotations

from kag_neo4j.errors import KagError
from kag_neo4j.schema.issues import Location


class RuleError(KagError):
    """A rule file could not be parsed, ordered, compiled or applied."""


class RuleSyntaxError(RuleError):
    """A rule file is malformed: ``FILE:LINE:COL: expected …, found …``."""

    def __init__(self, location: Location, message: str) -> None:
        self.location = location
        self.reason = message
        super().__init__(f"{location}: {message}")


class RuleCompileError(RuleError):
    """A rule parses but cannot be compiled to Cypher (unknown name, unsupported construct)."""

    def __init__(self, location: Location | None, message: str) -> None:
        self.location = location
        self.reason = message
        super().__init__(f"{location}: {message}" if location else message)


class RuleCycleError(RuleError):
    """Rules depend on each other's results in a cycle; ``cycle`` names the rules in order."""

    def __init__(self, cycle: list[str], message: str) -> None:
        self.cycle = cycle
        super().__init__(message)
