"""Located problems in a schema file, and the error that carries them.

Every message reads ``FILE:LINE:COLUMN: expected ..., found ...`` (or ``FILE:LINE:COLUMN:
<problem>; <fix>``). Lines and columns are 1-based; a tab counts as one column.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from kag_neo4j.errors import SchemaError


class Location(BaseModel):
    """Where something was declared: file, 1-based line and 1-based column."""

    model_config = ConfigDict(frozen=True)

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class SchemaIssue(BaseModel):
    """One problem found while parsing or validating."""

    model_config = ConfigDict(frozen=True)

    location: Location | None
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}" if self.location else self.message


class SchemaFileError(SchemaError):
    """A schema file is malformed or invalid; ``issues`` lists every located problem."""

    def __init__(self, issues: Sequence[SchemaIssue]) -> None:
        if not issues:
            raise ValueError("SchemaFileError needs at least one issue")
        self.issues: tuple[SchemaIssue, ...] = tuple(issues)
        super().__init__("\n".join(str(issue) for issue in self.issues))

    @property
    def location(self) -> Location | None:
        """The location of the first issue."""
        return self.issues[0].location


def fail(location: Location | None, message: str) -> SchemaFileError:
    """A :class:`SchemaFileError` with a single issue (raise it)."""
    return SchemaFileError([SchemaIssue(location=location, message=message)])
