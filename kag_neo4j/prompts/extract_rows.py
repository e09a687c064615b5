"""The extraction prompt in its compact form: entities, relations and events as positional rows.

``{"entities":[["Ada Lovelace","Person","English mathematician"]],
"relations":[["Ada Lovelace","worked with","Charles Babbage",{"start":"1833"}]]}``

Same knowledge as the keyed form (:mod:`kag_neo4j.prompts.extract`), fewer tokens: a small local
model spends most of an extraction generating its reply, and keys repeated on every item are
about half of it. A row's optional last element is its property map (an event's: its roles).
:meth:`RowsExtractionResponse.expanded` turns a reply into the keyed :class:`ExtractionResponse`,
so everything after the call is shared. Rows are read leniently, like the keyed form: a row with
too few cells is dropped and counted, cells after the property map are ignored, a row repeated
(a looping model) is kept once, and a keyed object where a row belongs is read as the keyed form
reads it. Descriptions are capped at :data:`DESCRIPTION_CHARS` by the grammar: asked for "one short
clause", a 1.5B model copies whole paragraphs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.messages import conversation

from .extract import (
    EntityOut,
    EventOut,
    ExtractionResponse,
    Language,
    RelationOut,
    schema_block,
    user_lines,
)

__all__ = [
    "DESCRIPTION_CHARS",
    "EXTRACT_ROWS_PROMPT_VERSION",
    "RowsExtractionResponse", "build_extract_rows_messages", "rows_system_prompt"]

EXTRACT_ROWS_PROMPT_VERSION = "extract-rows-1"


#: the longest description a row may carry (characters; enforced by the grammar where there is one)
DESCRIPTION_CHARS = 80


def _row_schema(third: dict[str, Any]) -> dict[str, Any]:
    """Three strings, optionally followed by a map of string values (properties, or an event's
    roles). Two alternatives rather than ``minItems``: grammar converters enforce every
    ``prefixItems`` entry, so a single tuple would force an empty ``{}`` onto every row."""
    cells: list[dict[str, Any]] = [{"type": "string"}, {"type": "string"}, third]
    values = {"type": "object", "additionalProperties": {"type": "string"}}
    return {"anyOf": [{"type": "array", "prefixItems": cells}, {"type": "array", "prefixItems": [*cells, values]}]}


#: ``[name, type, description, {properties}]`` (entities; events with roles in place of properties)
ItemRow = Annotated[list[Any] | dict[str, Any], WithJsonSchema(_row_schema({"type": "string", "maxLength": DESCRIPTION_CHARS}))]
#: ``[subject, predicate, object, {properties}]``
FactRow = Annotated[list[Any] | dict[str, Any], WithJsonSchema(_row_schema({"type": "string"}))]


def _cells(row: list[Any]) -> tuple[list[str], dict[str, Any]]:
    """A row's first three cells as text and its property map (``{}`` when it has none)."""
    texts = ["" if cell is None else str(cell) for cell in row[:3]]
    extra = row[3] if len(row) > 3 and isinstance(row[3], dict) else {}
    return texts, extra


def _distinct(rows: list[list[Any] | dict[str, Any]]) -> list[list[Any] | dict[str, Any]]:
    """Each distinct row once (a looping model repeats rows), rows with too few cells left out."""
    seen: set[str] = set()
    kept = []
    for row in rows:
        key = repr(row)
        if (isinstance(row, dict) or len(row) >= 3) and key not in seen:
            seen.add(key)
            kept.append(row)
    return kept


_Out = TypeVar("_Out", EntityOut, RelationOut, EventOut)


def _read(
    rows: list[list[Any] | dict[str, Any]], keyed: type[_Out], from_row: Callable[[list[str], dict[str, Any]], _Out]
) -> list[_Out]:
    """Each distinct row as ``keyed``: a keyed object validated as the keyed form reads it, a row
    built from its three cells and its property map."""
    return [keyed.model_validate(row) if isinstance(row, dict) else from_row(*_cells(row)) for row in _distinct(rows)]


class RowsExtractionResponse(BaseModel):
    """What the model returns for one chunk in the compact form."""

    model_config = ConfigDict(extra="ignore")

    entities: list[ItemRow] = Field(default_factory=list, description="[name, type, description, {properties}]")
    relations: list[FactRow] = Field(default_factory=list, description="[subject, predicate, object, {properties}]")
    events: list[ItemRow] = Field(default_factory=list, description="[name, type, description, {role: entity}]")

    @field_validator("entities", "relations", "events", mode="before")
    @classmethod
    def _rows(cls, value: Any) -> Any:
        if value is None:
            return []
        if not isinstance(value, list):
            return value  # invalid: the model is shown the error and asked again
        return [row for row in value if isinstance(row, (list, dict))]

    def expanded(self) -> ExtractionResponse:
        """The keyed response this reply stands for. A keyed item where a row belongs (a model
        that ignored the form) is read as the keyed form reads it; rows with fewer than three
        cells are left out (the extractor reports empty names and incomplete relations as usual)."""
        return ExtractionResponse(
            entities=_read(self.entities, EntityOut, lambda cells, extra: EntityOut(
                name=cells[0], type=cells[1] or "Entity", description=cells[2], properties=extra)),
            relations=_read(self.relations, RelationOut, lambda cells, extra: RelationOut(
                subject=cells[0], predicate=cells[1], object=cells[2], properties=extra)),
            events=_read(self.events, EventOut, lambda cells, extra: EventOut(
                name=cells[0], type=cells[1] or "Event", description=cells[2], roles=extra)),
        )

    @property
    def short_rows(self) -> int:
        """Rows with fewer than the three required cells."""
        return sum(
            isinstance(row, list) and len(row) < 3 for rows in (self.entities, self.relations, self.events) for row in rows
        )


_SYSTEM_EN = """\
You build a knowledge graph from one passage. Reply with compact JSON only, every item a row:
{"entities":[[name,type,description]],"relations":[[subject,predicate,object]],"events":[[name,type,description,{role:entity}]]}
- entities: the named people, organisations, places, works, products, dates and key concepts, each once. name: the full name as written (never a pronoun); type: one word class; description: one short clause from the passage. Literal attributes stated for an entity go in a fourth cell, e.g. {"founded":"1902","population":"3.3 million"}.
- relations: facts the passage states between two entities, subject first; subject and object are entity names; predicate: a short verb phrase; dates, amounts or roles of the fact in a fourth cell, e.g. {"start":"2009","end":"2018"}.
- events: things that happened; the fourth cell maps each role to an entity name, e.g. {"agent":"…","location":"…"}.
- Only what the passage says; copy values as written; no text outside the JSON."""

_SYSTEM_ZH = """\
你从一段文字构建知识图谱。只输出紧凑的 JSON，每一项是一行数组：
{"entities":[[name,type,description]],"relations":[[subject,predicate,object]],"events":[[name,type,description,{角色:实体}]]}
- entities：文中的人物、组织、地点、作品、产品、日期和关键概念，每个只写一次。name：文中的完整名称（不要代词）；type：一个类别词；description：取自原文的一句简短说明。文中给出的字面属性放在第四格，如 {"成立时间":"1902年"}。
- relations：文中陈述的两个实体之间的事实，主语在前；subject、object 为实体名称；predicate：简短的动词短语；该事实的时间、金额或角色放在第四格，如 {"开始":"2009年","结束":"2018年"}。
- events：发生的事件；第四格把每个角色映射到实体名称，如 {"主体":"…","地点":"…"}。
- 只写文中有的内容；数值照原文抄写；JSON 之外不要输出任何文字。"""


def rows_system_prompt(language: Language = "en", schema_listing: str | None = None) -> str:
    """The system message of the compact form, with the schema listing when one is given."""
    base = _SYSTEM_ZH if language == "zh" else _SYSTEM_EN
    return base + "\n" + schema_block(language, schema_listing) if schema_listing else base


def build_extract_rows_messages(
    text: str,
    *,
    title: str = "",
    title_path: list[str] | None = None,
    language: Language = "en",
    schema_listing: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` for one chunk in the compact form."""
    return conversation(rows_system_prompt(language, schema_listing), user_lines(text, title, title_path, language))
