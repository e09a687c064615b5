"""Table mapping files: what a CSV holds when its name and columns do not follow the convention.

By convention ``Company.csv`` holds records of the schema type ``Company`` (an ``id`` column, a
``name`` column, one column per property or relation), ``Company_fundTrans_Company.csv`` holds
relations (``src``/``dst`` or ``srcId``/``dstId``) and ``CompanyUpdate.csv`` updates records of
``Company``. A mapping file (TOML) says it for files that differ::

    # kag-mapping.toml
    [files."firms_2024.csv"]            # a file name, or a glob ("firms_*.csv")
    type = "Company"                    # the schema type of its rows
    columns = { firm_id = "id", firm = "name", phone_no = "hasPhone" }   # header -> convention

    [files."transfers.csv"]
    type = "Person_fundTrans_Person"    # an edge table: Subject_predicate_Object
    columns = { payer = "src", payee = "dst" }

    [files."fixes.csv"]
    type = "Company"
    update = true                       # rows update records of Company (their values replace)

    [files."notes.csv"]
    mode = "passages"                   # auto | records | passages | text

``kag-neo4j load DIR --schema S --mapping kag-mapping.toml``; the first entry whose pattern
matches a file's name applies (exact names before globs).
"""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from kag_neo4j.errors import ConfigError


class TableMapping(BaseModel):
    """What one CSV file holds (see the module docs)."""

    model_config = ConfigDict(extra="forbid")

    type: str | None = Field(default=None, description="schema type of the rows, or Subject_predicate_Object")
    mode: Literal["auto", "records", "passages", "text"] | None = None
    update: bool = False
    columns: dict[str, str] = Field(default_factory=dict, description="header name -> conventional name")


class MappingFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    files: dict[str, TableMapping] = Field(default_factory=dict)

    def for_file(self, path: Path) -> TableMapping | None:
        """The mapping of ``path`` (by file name; an exact name wins over a glob)."""
        name = path.name
        if name in self.files:
            return self.files[name]
        for pattern, mapping in self.files.items():
            if fnmatch.fnmatchcase(name, pattern):
                return mapping
        return None


def load_mapping(path: str | Path) -> MappingFile:
    """Read a TOML mapping file; a clear :class:`ConfigError` names what is wrong."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"mapping file {path} does not exist; give the path of a TOML mapping file") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"mapping file {path} is not valid UTF-8 TOML ({exc}); fix its syntax") from exc
    try:
        return MappingFile.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"mapping file {path}: {problems} (see docs/builder-input.md, 'Mapping files')") from exc
