"""The extraction prompt: one chunk -> entities, events, relations and property values (one call).

English and Chinese variants. When a schema is given, its types and relations are injected as a
short listing (``SchemaView.listing``) and the model is told to use them (schema-constrained);
without one it names types and predicates freely (schema-free). The model answers with
:class:`ExtractionResponse`, whose parsing is lenient about what small models get wrong
(a string where a list belongs, ``null`` properties, ``head``/``tail`` for subject/object).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.messages import conversation

__all__ = [
    "EXTRACT_PROMPT_VERSION",
    "EntityOut",
    "EventOut",
    "ExtractionResponse",
    "RelationOut",
    "build_extract_messages",
    "schema_block",
    "system_prompt",
    "user_lines",
]

EXTRACT_PROMPT_VERSION = "extract-1"
Language = Literal["en", "zh"]

Scalar = str | int | float | bool


def _clean_properties(value: Any) -> dict[str, Scalar]:
    """Coerce a model's property map to scalars: ``null`` dropped, lists joined, objects as JSON."""
    if not isinstance(value, dict):
        return {}
    result: dict[str, Scalar] = {}
    for key, item in value.items():
        if item is None or item == "" or item == [] or item == {}:
            continue
        if isinstance(item, (str, int, float, bool)):
            result[str(key)] = item
        elif isinstance(item, list) and all(isinstance(x, (str, int, float, bool)) for x in item):
            result[str(key)] = ", ".join(str(x) for x in item)
        else:
            result[str(key)] = json.dumps(item, ensure_ascii=False)
    return result


def _string_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()] if value.strip() else []
    if isinstance(value, list):
        return [str(item).strip() for item in value if item is not None and str(item).strip()]
    return [str(value)]


class _Out(BaseModel):
    model_config = ConfigDict(extra="ignore")

    @field_validator("properties", mode="before", check_fields=False)
    @classmethod
    def _properties(cls, value: Any) -> dict[str, Scalar]:
        return _clean_properties(value)

    @field_validator("type", "description", mode="before", check_fields=False)
    @classmethod
    def _text(cls, value: Any) -> str:
        return "" if value is None else str(value)


class EntityOut(_Out):
    name: str
    type: str = "Entity"
    description: str = ""
    aliases: list[str] = Field(default_factory=list)
    properties: dict[str, Scalar] = Field(default_factory=dict)

    @field_validator("aliases", mode="before")
    @classmethod
    def _aliases(cls, value: Any) -> list[str]:
        return _string_list(value)


class EventOut(_Out):
    name: str
    type: str = "Event"
    description: str = ""
    roles: dict[str, str] = Field(default_factory=dict, description="role -> entity name")
    properties: dict[str, Scalar] = Field(default_factory=dict)

    @field_validator("roles", mode="before")
    @classmethod
    def _roles(cls, value: Any) -> dict[str, str]:
        if not isinstance(value, dict):
            return {}
        return {
            str(k): ", ".join(map(str, v)) if isinstance(v, list) else str(v)
            for k, v in value.items()
            if v not in (None, "", [])
        }


class RelationOut(_Out):
    subject: str
    predicate: str
    object: str
    properties: dict[str, Scalar] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _synonyms(cls, value: Any) -> Any:
        if isinstance(value, dict):
            value = dict(value)
            for wanted, others in (
                ("subject", ("head", "source", "s", "from")),
                ("predicate", ("relation", "relationship", "p", "type")),
                ("object", ("tail", "target", "o", "to")),
            ):
                if wanted not in value:
                    for other in others:
                        if other in value:
                            value[wanted] = value.pop(other)
                            break
            for key in ("subject", "predicate", "object"):
                if key in value and not isinstance(value[key], str) and value[key] is not None:
                    value[key] = str(value[key])
        return value


class ExtractionResponse(BaseModel):
    """What the model returns for one chunk."""

    model_config = ConfigDict(extra="ignore")

    entities: list[EntityOut] = Field(default_factory=list)
    events: list[EventOut] = Field(default_factory=list)
    relations: list[RelationOut] = Field(default_factory=list)


_SYSTEM_EN = """\
You build a knowledge graph from one passage. Reply with compact JSON only:
{"entities":[{"name","type","description","aliases","properties"}],"events":[{"name","type","description","roles","properties"}],"relations":[{"subject","predicate","object","properties"}]}
- entities: the named people, organisations, places, works, products, dates and key concepts in the passage. name: the full name as written (never a pronoun); type: one word class; description: one short clause from the passage; aliases: other names the passage uses for it; properties: literal attributes stated for it (e.g. {"founded":"1902","population":"3.3 million"}).
- relations: facts the passage states between two entities; subject and object are entity names; predicate: a short verb phrase; properties: dates, amounts or roles of the fact (e.g. {"start":"2009","end":"2018"}).
- events: things that happened, roles mapping a role to an entity name (e.g. {"agent":"...","location":"..."}), a date in properties.
- Only what the passage says; copy values as written; leave out empty fields; no text outside the JSON."""

_SCHEMA_EN = """\
Schema: use these types for entities and events, and these relation names where they fit (type [kind]: props literal properties; rels relation->target type). If no type fits, use "Entity"; a fact no relation fits may use a short verb phrase.
{listing}"""

_SYSTEM_ZH = """\
你从一段文字构建知识图谱。只输出紧凑的 JSON：
{"entities":[{"name","type","description","aliases","properties"}],"events":[{"name","type","description","roles","properties"}],"relations":[{"subject","predicate","object","properties"}]}
- entities：文中的人物、组织、地点、作品、产品、日期和关键概念。name：文中的完整名称（不要代词）；type：一个类别词；description：取自原文的一句简短说明；aliases：文中对它的其他称呼；properties：文中给出的字面属性（如 {"成立时间":"1902年"}）。
- relations：文中陈述的两个实体之间的事实；subject、object 为实体名称；predicate：简短的动词短语；properties：该事实的时间、金额或角色（如 {"开始":"2009年","结束":"2018年"}）。
- events：发生的事件，roles 把角色映射到实体名称（如 {"主体":"…","地点":"…"}），时间放在 properties。
- 只写文中有的内容；数值照原文抄写；空字段省略；JSON 之外不要输出任何文字。"""

_SCHEMA_ZH = """\
Schema：实体和事件请使用以下类型，关系尽量使用以下关系名（类型 [种类]: props 字面属性; rels 关系->目标类型）。没有合适类型时用 "Entity"；没有合适关系时可用简短动词短语。
{listing}"""


def schema_block(language: Language, schema_listing: str) -> str:
    """The part of the system message that lists the schema (both reply forms share it)."""
    return (_SCHEMA_ZH if language == "zh" else _SCHEMA_EN).format(listing=schema_listing)


def system_prompt(language: Language = "en", schema_listing: str | None = None) -> str:
    """The system message, with the schema listing when one is given."""
    base = _SYSTEM_ZH if language == "zh" else _SYSTEM_EN
    return base + "\n" + schema_block(language, schema_listing) if schema_listing else base


def user_lines(text: str, title: str = "", title_path: list[str] | None = None, language: Language = "en") -> list[str]:
    """The user message's lines: the chunk's title, its heading path and its text."""
    labels = ("标题", "章节", "正文") if language == "zh" else ("Title", "Section", "Text")
    lines = []
    if title:
        lines.append(f"{labels[0]}: {title}")
    path = [part for part in (title_path or []) if part and part != title]
    if path:
        lines.append(f"{labels[1]}: {' > '.join(path)}")
    lines.append(f"{labels[2]}:\n{text}")
    return lines


def build_extract_messages(
    text: str,
    *,
    title: str = "",
    title_path: list[str] | None = None,
    language: Language = "en",
    schema_listing: str | None = None,
) -> list[ChatMessage]:
    """``[system, user]`` for one chunk; the user message carries its title and heading path."""
    return conversation(system_prompt(language, schema_listing), user_lines(text, title, title_path, language))
