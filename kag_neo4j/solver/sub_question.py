"""What a step's sub-question says: the earlier result it refers to, and the kind of answer it asks.

Planners write later steps with a reference to an earlier answer — "Who was in charge of *that
country*?", "Where did *this band* form?" — and bind the answer in the logical form
(``Retrieval(s=o1, …)``). A small reader shown the result beside the question (``o1 = Somalia``)
often answers with the result itself; asked "Who was in charge of Somalia?" it reads the passage.
:func:`spell_out` puts the one name a bound end holds in place of the demonstrative phrase that
names it: the phrase's noun is a word of the end's type (``that country`` for ``o1:Country``) or a
common word for a person, place, work or group (``that author`` for ``o1:Person``). English only;
a question it does not recognise is returned unchanged.

A small planner also writes a step whose words and logical form disagree: "Where was that director
born?" over ``p=birthDate, o=o2:Date`` (the predicate of a worked example). :func:`asked_kind`
reads what the words ask — a place (``where``, ``in which city``, ``哪里``) or a time (``when``,
``what year``, ``何时``) — and :func:`contradicts` says whether the plan's type for the answer
cannot be that (a date or number for a place; an entity type for a time).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from kag_neo4j.solver.matching import DATE_TYPES, NUMBER_TYPES
from kag_neo4j.solver.validate import GENERIC_TYPE

__all__ = ["AskedKind", "Reference", "asked_kind", "contradicts", "spell_out"]

AskedKind = Literal["place", "time"]

#: nouns a planner uses for an earlier result whatever its type
_COMMON_NOUNS = (
    "person", "people", "man", "woman", "author", "writer", "director", "producer", "performer", "singer",
    "artist", "actor", "actress", "composer", "player", "founder", "creator", "leader", "owner", "member",
    "place", "location", "city", "town", "country", "state", "region", "area", "county", "district",
    "organization", "organisation", "company", "group", "band", "team", "club", "party", "institution",
    "work", "film", "movie", "book", "album", "song", "show", "series", "entity", "one",
)
_DEMONSTRATIVE = r"\b(?:that|this|these|those|the said)\s+"
_CAMEL = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class Reference:
    """The one name a bound end holds, and the type its defining step gave it."""

    name: str
    type_name: str | None = None


def _type_words(type_name: str | None) -> list[str]:
    words = [w.lower() for w in _CAMEL.findall(type_name or "")]
    return [" ".join(words), *words] if len(words) > 1 else words


def _phrase(nouns: Sequence[str]) -> re.Pattern[str] | None:
    alternatives = "|".join(re.escape(noun) for noun in sorted(set(nouns), key=len, reverse=True) if noun)
    return re.compile(f"{_DEMONSTRATIVE}(?:{alternatives})s?\\b", re.IGNORECASE) if alternatives else None


def spell_out(question: str, references: Sequence[Reference]) -> str:
    """``question`` with each reference's demonstrative phrase replaced by its name (the first
    phrase of the reference's type, else the first common one left); unchanged when none matches."""
    text = question
    for nouns in ([_type_words(ref.type_name) for ref in references], [_COMMON_NOUNS] * len(references)):
        for ref, words in zip(references, nouns, strict=True):
            pattern = _phrase(words)
            if pattern is None or ref.name in text:
                continue
            text = pattern.sub(ref.name.replace("\\", "\\\\"), text, count=1)  # backslashes escaped: a name is no template
    return text


_PLACES = "city|town|village|country|nation|state|province|region|county|district|place|location|continent|island"
_TIMES = "year|date|month|day|decade|century"
_KINDS: tuple[tuple[AskedKind, re.Pattern[str]], ...] = (
    ("place", re.compile(rf"^\W*(?:where\b|(?:(?:in|from|at|to)\s+)?(?:which|what)\s+(?:{_PLACES})\b)", re.IGNORECASE)),
    ("time", re.compile(rf"^\W*(?:when\b|(?:(?:in|on|by|since)\s+)?(?:which|what)\s+(?:{_TIMES})\b)", re.IGNORECASE)),
    ("place", re.compile(r"哪里|哪儿|何地|何处|在哪")),
    ("time", re.compile(r"什么时候|何时|哪一?年|哪一?天")),
)
#: plan types no place can be
_TIME_OR_NUMBER = DATE_TYPES | NUMBER_TYPES


def asked_kind(question: str) -> AskedKind | None:
    """``place`` or ``time`` when the question's words ask for one (English question words at its
    start, Chinese anywhere); ``None`` for anything else."""
    for kind, pattern in _KINDS:
        if pattern.search(question):
            return kind
    return None


def contradicts(kind: AskedKind | None, type_name: str | None, value_types: frozenset[str] | set[str]) -> bool:
    """Whether an answer of ``type_name`` cannot be what a question of ``kind`` asks: a place typed
    as a date or number, a time typed as an entity. No type, ``Entity`` or ``Text`` fits anything."""
    if kind is None or not type_name or type_name in {GENERIC_TYPE, "Text"}:
        return False
    return type_name in _TIME_OR_NUMBER if kind == "place" else type_name not in value_types
