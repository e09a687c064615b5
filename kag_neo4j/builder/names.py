"""Name keys: the normalised form of a name that entity resolution and concept linking compare.

``name_key("The Beatles") == name_key("beatles") == "beatles"``; ``name_key("Zürich") == "zurich"``.
Rules: Unicode NFKC, case-folding, accents removed from Latin letters only (never from kana or
Hangul, where the marks change the word), possessive ``'s`` dropped, punctuation turned into
spaces, whitespace collapsed, a leading English article dropped. Keys longer than
:data:`MAX_KEY` characters are shortened with a hash suffix so ids stay index-friendly.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

MAX_KEY = 200
_POSSESSIVE = re.compile(r"(?<=\w)['’]s\b")
_PUNCT = re.compile(r"[^\w\s]|_", re.UNICODE)
_ARTICLE = re.compile(r"^(?:the|a|an) (?=\S)")
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"\w+", re.UNICODE)


def _strip_latin_accents(text: str) -> str:
    out: list[str] = []
    for char in unicodedata.normalize("NFKD", text):
        if unicodedata.category(char) == "Mn" and out and ord(out[-1]) < 0x0370:
            continue  # a combining mark on a Latin letter: é -> e
        out.append(char)
    return unicodedata.normalize("NFKC", "".join(out))


def name_key(name: str) -> str:
    """The resolution key of ``name`` ('' when nothing is left, e.g. for pure punctuation)."""
    text = unicodedata.normalize("NFKC", name).casefold()
    text = _strip_latin_accents(text)
    text = _POSSESSIVE.sub("", text)
    text = _PUNCT.sub(" ", text)
    text = " ".join(text.split())
    text = _ARTICLE.sub("", text)
    if len(text) > MAX_KEY:
        digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:12]
        text = f"{text[: MAX_KEY - 13]}~{digest}"
    return text


def display_rank(surface: str) -> tuple[int, int]:
    """Sort key for choosing an entity's display name among equally keyed surface forms: plain
    names first, then ones with a leading article or stray punctuation."""
    stripped = surface.strip()
    artefact = not stripped[:1].isalnum() or not (stripped[-1:].isalnum() or stripped[-1:] in ".)") \
        or bool(_ARTICLE.match(stripped.casefold()))
    possessive = bool(_POSSESSIVE.search(stripped))
    return int(artefact), int(possessive)


def digits(key: str) -> tuple[str, ...]:
    """The numbers in a key ("1990 world cup" -> ("1990",)); names with other numbers never merge."""
    return tuple(_DIGITS.findall(key))


def tokens(key: str) -> list[str]:
    return _WORD.findall(key)


#: words that make a name a description of something else ("University of Toronto" is not Toronto)
FUNCTION_WORDS = frozenset({"of", "the", "and", "for", "in", "on", "at", "to", "a", "an", "by", "with", "from"})
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _close_tokens(x: str, y: str) -> bool:
    """Two words that differ by a typo or an inflection (``babbage`` / ``babbages``)."""
    if x == y:
        return True
    if min(len(x), len(y)) <= 4 or abs(len(x) - len(y)) > 1 or x[0] != y[0] or _CJK.search(x) or _CJK.search(y):
        return False
    from difflib import SequenceMatcher

    return SequenceMatcher(None, x, y).ratio() >= 0.9


def similar_names(new: str, known: str, *, tails: bool = True) -> bool:
    """A lexical guard for embedding-based merges of the name key ``new`` into ``known``
    (embedding similarity alone merges "1990 FIFA World Cup" with "1994 FIFA World Cup", or
    "University of Toronto" with "Toronto"). True when the numbers agree and one of:

    * one is the other's acronym (``mlb`` / ``major league baseball``);
    * ``tails`` and ``new`` is the tail of ``known``, a short name without function words (a
      surname: ``puzo`` into ``mario puzo``; never the full name into the bare surname, which
      would make the surname swallow every namesake);
    * same number of words, each equal or - for Latin words longer than four letters - off by
      one letter (``charles babbages`` / ``charles babbage``, ``namibians`` / ``namibian``; not
      ``colombia`` / ``columbia``).
      CJK words must be equal.
    """
    if new == known:
        return True
    if digits(new) != digits(known):
        return False
    tn, tk = tokens(new), tokens(known)
    if not tn or not tk:
        return False
    short, long = (tn, tk) if len(tn) <= len(tk) else (tk, tn)
    if len(short) == 1 and len(long) > 1 and short[0] == "".join(w[0] for w in long if w not in FUNCTION_WORDS):
        return True
    if tails and len(tn) < len(tk) <= 4 and tk[-len(tn):] == tn and not set(tk) & FUNCTION_WORDS:
        return True
    return len(tn) == len(tk) and all(_close_tokens(x, y) for x, y in zip(tn, tk))
