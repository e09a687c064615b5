"""The schema-fill prompt: one entity a passage is about, and the schema relations of its type.

KAG's schema-constrained extraction asks, for a record of a schema type, the values of that type's
relations (``Disease``: ``complication``, ``commonSymptom``, ``applicableMedicine``...) from the
record's text. A small model asked for free ``[subject, predicate, object]`` rows names the fact in
its own words (``治疗``) and leaves the object untyped; asked to fill a form whose keys are the
schema's relations it has no predicate to choose, and the relation's range types the object.

The reply is one JSON object with a key per relation (its display name when the prompt is in the
language the display names are written in), each a list of names copied from the text. The keys
are required by the JSON schema, so a grammar-constrained model writes each of them and decides
only what goes in the lists. :func:`fill_form` builds the response model for one form.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from kag_neo4j.models.base import ChatMessage
from kag_neo4j.models.messages import conversation

from .extract import Language, user_lines

__all__ = ["FILL_PROMPT_VERSION", "FillField", "FillResponse", "build_fill_messages", "fill_form"]

FILL_PROMPT_VERSION = "fill-1"
#: the longest name a list may hold (characters) and the most names per relation
NAME_CHARS = 40
NAMES_PER_RELATION = 12


@dataclass(frozen=True)
class FillField:
    """One relation of the form: the key the model writes, the relation it stands for and what
    its values are (the range type's name and display name)."""

    key: str
    relation: str
    target: str
    target_display: str | None = None


class FillResponse(BaseModel):
    """A filled form: relation key -> names (the fields are made per form by :func:`fill_form`)."""

    model_config = ConfigDict(populate_by_name=True, extra="ignore")
    fields_by_key: ClassVar[dict[str, str]] = {}

    def values(self) -> dict[str, list[str]]:
        """relation name -> the names the model listed for it (stripped, empty ones left out)."""
        out: dict[str, list[str]] = {}
        for field_name, relation in self.fields_by_key.items():
            names = [name.strip() for name in getattr(self, field_name) if name.strip()]
            if names:
                out[relation] = names
        return out


def _names(value: Any) -> list[str]:
    """A model's list of names, leniently: a bare string is one name, other scalars their text."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(item) for item in value if isinstance(item, (str, int, float)) and str(item).strip()]
    return []


def _required_keys(schema: dict[str, Any]) -> None:
    schema["required"] = list(schema.get("properties", {}))


def fill_form(name: str, fields: Sequence[FillField]) -> type[FillResponse]:
    """The response model of one form: a list of names per field, every key required in the
    JSON schema (so a grammar writes each), each list at most :data:`NAMES_PER_RELATION` names of
    at most :data:`NAME_CHARS` characters."""
    names_schema: dict[str, Any] = {"items": {"type": "string", "maxLength": NAME_CHARS}, "maxItems": NAMES_PER_RELATION}
    definitions: dict[str, Any] = {
        f"f{i}": (list[str], Field(default_factory=list, alias=field.key, json_schema_extra=names_schema))
        for i, field in enumerate(fields)
    }
    model: type[FillResponse] = create_model(  # type: ignore[call-overload]
        name, __base__=FillResponse,
        __validators__={"names": field_validator("*", mode="before")(_names)}, **definitions,
    )
    model.model_config["json_schema_extra"] = _required_keys
    model.model_rebuild(force=True)
    model.fields_by_key = {f"f{i}": field.relation for i, field in enumerate(fields)}
    return model


_SYSTEM_EN = """\
You fill in a knowledge-graph record for one entity from a passage. For each relation listed, write the names the passage gives for that relation of the entity, copied as written; [] when the passage gives none. Only names from the passage; no text outside the JSON."""

_SYSTEM_ZH = """\
你根据一段文字为图谱中的一个实体填写关系。对列出的每个关系，写出文中给出的、与该实体有这种关系的名称，照原文抄写；文中没有就写 []。只写文中的名称；JSON 之外不要输出任何文字。"""


def build_fill_messages(
    text: str,
    *,
    entity: str,
    entity_type: str,
    fields: Sequence[FillField],
    title: str = "",
    language: Language = "en",
) -> list[ChatMessage]:
    """``[system, user]``: the entity, the form's relations with what their values are, the text."""
    if language == "zh":
        lines = [f"实体：{entity}（{entity_type}）", "关系（键：值的类型）："]
    else:
        lines = [f"Entity: {entity} ({entity_type})", "Relations (key: what the values are):"]
    for field in fields:
        what = field.target_display or field.target
        lines.append(f"- {field.key}: {what}" + (f" ({field.target})" if what != field.target else ""))
    return conversation(_SYSTEM_ZH if language == "zh" else _SYSTEM_EN, [*lines, *user_lines(text, title, None, language)])
