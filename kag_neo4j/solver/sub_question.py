"""A step's sub-question with the earlier result it refers to spelled out.

Planners write later steps with a reference to an earlier answer — "Who was in charge of *that
country*?", "Where did *this band* form?" — and bind the answer in the logical form
(``Retrieval(s=o1, …)``). A small reader shown the result beside the question (``o1 = Somalia``)
often answers with the result itself; asked "Who was in charge of Somalia?" it reads the passage.
:func:`spell_out` puts the one name a bound end holds in place of the demonstrative phrase that
names it: the phrase's noun is a word of the end's type (``that country`` for ``o1:Country``) or a
common word for a person, place, work or group (``that author`` for ``o1:Person``). English only;
a question it does not recognise is returned unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Reference", "spell_out"]

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
