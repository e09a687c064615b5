"""Deterministic matching the solver relies on before it trusts the graph without a model.

* :func:`predicate_similarity` — does a stored predicate (``found in``, ``foundedIn``,
  ``出生于``) say what the plan asked (``founded``)? Exact keys score 1.0; English words are
  compared by crude stems without function words (``founded`` ~ ``found in`` ~ ``founder``);
  Chinese by character bigrams.
* :func:`name_similarity` — is a linked entity really the one the question named
  (``the Harrow Valley Rail Company`` for ``Harrow Valley Rail Company``)?
* :func:`fits_type` — can a value answer a step whose object is a ``Year``, ``Date``,
  ``Integer`` ... (value types) or an entity type (then it must not be a bare number or date)?

These decide only when a step may be answered from graph facts alone; anything weaker goes to
the model together with the passages, so a loose match never becomes an answer by itself.
"""

from __future__ import annotations

import re
import unicodedata
from difflib import SequenceMatcher

from kag_neo4j.solver.values import normalise_text, parse_date, parse_number
from kag_neo4j.store.keys import predicate_key

__all__ = [
    "DATE_TYPES",
    "NUMBER_TYPES",
    "content_stems",
    "fits_type",
    "hierarchy_leaf",
    "looks_like_value",
    "membership_similarity",
    "name_similarity",
    "normalise_name",
    "predicate_similarity",
    "stem",
]

DATE_TYPES = frozenset({"Year", "Date", "Time"})
NUMBER_TYPES = frozenset({"Integer", "Float", "Number", "Money", "Percent", "Duration"})

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_FUNCTION_WORDS = frozenset(
    ["in", "on", "at", "by", "of", "to", "for", "from", "with", "as", "into", "onto", "the", "a", "an", "is", "was", "were", "be", "been", "being", "has", "have", "had", "did", "does", "do", "when", "where", "who", "whom", "which", "what", "date", "year", "time", "its", "his", "her", "their", "this", "that"]
)
_ARTICLES = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)


def stem(word: str) -> str:
    """A crude English stem: ``founded``/``founder``/``founding`` -> ``found``."""
    w = word.lower()
    for suffix, replacement, minimum in (
        ("ies", "y", 5), ("ied", "y", 5), ("ing", "", 6), ("ers", "", 6), ("er", "", 6),
        ("ed", "", 5), ("es", "", 5), ("s", "", 4),
    ):
        if w.endswith(suffix) and len(w) >= minimum:
            w = w[: len(w) - len(suffix)] + replacement
            break
    if len(w) > 4 and w.endswith("e"):
        w = w[:-1]
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]
    return w


def _words(text: str) -> list[str]:
    spaced = _CAMEL.sub(" ", unicodedata.normalize("NFKC", text))
    return [w.lower() for w in _WORD.findall(spaced) if not _CJK.search(w)]


def content_stems(text: str) -> set[str]:
    """Stems of the words of ``text`` without function words (all words if that leaves none)."""
    words = _words(text)
    content = [w for w in words if w not in _FUNCTION_WORDS] or words
    return {stem(w) for w in content}


def _bigrams(text: str) -> set[str]:
    chars = "".join(_CJK.findall(text))
    if len(chars) == 1:
        return {chars}
    return {chars[i : i + 2] for i in range(len(chars) - 1)}


def predicate_similarity(wanted: str, found: str) -> float:
    """0..1: 1.0 for the same key, 0.9 for the same content stems, less for partial overlap."""
    if not wanted or not found:
        return 0.0
    if predicate_key(wanted) == predicate_key(found):
        return 1.0
    score = 0.0
    if _CJK.search(wanted) and _CJK.search(found):
        a, b = _bigrams(wanted), _bigrams(found)
        if a and b:
            score = 0.9 * (2 * len(a & b) / (len(a) + len(b)))
    a_stems, b_stems = content_stems(wanted), content_stems(found)
    if a_stems and b_stems:
        score = max(score, 0.9 * len(a_stems & b_stems) / len(a_stems | b_stems))
    return score


def membership_similarity(wanted: str | None, object_type: str | None, classes: list[str], name: str) -> float:
    """0..1: how well a concept membership (``belongTo`` a concept of the types ``classes``,
    named ``name``) answers a step asking ``wanted`` of an object typed ``object_type``.

    1.0 when the step's object is one of the concept's types (``o=o1:TaxOfRiskUser``: KAG's
    ``p=belongTo, o=TaxOfRiskUser`` under any predicate word); 0.9 when the predicate's content
    words are those of a class type (``isRiskUser`` ~ ``TaxOfRiskUser``) or it spells out the
    concept's name (``是赌博App老板`` ~ ``赌博App老板``); else the predicate similarity to them.
    """
    if object_type and object_type in classes:
        return 1.0
    if not wanted:
        return 0.0
    wanted_stems = content_stems(wanted)
    wanted_cjk = "".join(_CJK.findall(wanted))
    score = max([predicate_similarity(wanted, text) for text in [*classes, name]], default=0.0)
    if wanted_stems and not wanted_cjk and any(wanted_stems <= content_stems(label) for label in classes):
        score = max(score, 0.9)
    name_cjk = "".join(_CJK.findall(name))
    if wanted_cjk and name_cjk and (name_cjk in wanted_cjk or wanted_cjk in name_cjk) and (
        set(_words(wanted)) <= set(_words(name))
    ):
        score = max(score, 0.9)
    return score


def hierarchy_leaf(name: str) -> str | None:
    """The last part of a hierarchical name ``a-b-c`` (KAG's product and industry ids:
    ``商品化工-橡胶-合成橡胶-顺丁橡胶`` -> ``顺丁橡胶``); ``None`` for other names: one with
    spaces or an empty part, and a two-part name without CJK (``Baden-Württemberg`` is no
    hierarchy)."""
    parts = name.strip().split("-")
    if len(parts) < 2 or any(not part or part != part.strip() or " " in part for part in parts):
        return None
    if len(parts) == 2 and not _CJK.search(name):
        return None
    return parts[-1] if len(parts[-1]) >= 2 else None


def normalise_name(text: str) -> str:
    """Case-folded, NFKC, punctuation-free, without a leading article."""
    value = normalise_text(text)
    value = _ARTICLES.sub("", value)
    value = re.sub(r"[^\w\s]", " ", value)
    return " ".join(value.split())


def name_similarity(mention: str, name: str) -> float:
    """1.0 for the same name (ignoring case, articles, punctuation); 0.85 when one contains the
    other and covers at least half of it; else a character-sequence ratio."""
    a, b = normalise_name(mention), normalise_name(name)
    if not a or not b:
        return 0.0
    if a == b:
        return 1.0
    short, long_ = sorted((a, b), key=len)
    if short in long_ and len(short) >= 2 and len(short) * 2 >= len(long_):
        return 0.85
    return SequenceMatcher(None, a, b).ratio()


def looks_like_value(text: object) -> bool:
    """A bare number or date (``1871``, ``412 metres``, ``1950年``) rather than a name."""
    if isinstance(text, bool):
        return False
    if isinstance(text, int | float):
        return True
    return parse_number(text) is not None or parse_date(text) is not None


def fits_type(value: object, type_name: str | None, value_types: frozenset[str] | set[str]) -> bool:
    """Whether ``value`` can answer an element of type ``type_name``."""
    if type_name is None or type_name in {"Entity", "Text"}:
        return value is not None and str(value).strip() != ""
    if type_name in DATE_TYPES:
        if isinstance(value, int) and not isinstance(value, bool):
            return 1 <= value <= 9999
        return parse_date(value) is not None
    if type_name in NUMBER_TYPES:
        return parse_number(value) is not None
    if type_name == "Boolean":
        return isinstance(value, bool) or normalise_text(value) in {"yes", "no", "true", "false", "是", "否"}
    if type_name in value_types:
        return True
    return not looks_like_value(value)
