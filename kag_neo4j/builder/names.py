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
    if min(len(x), len(y)) <= 4 or _CJK.search(x) or _CJK.search(y):
        return False
    from difflib import SequenceMatcher

    return SequenceMatcher(None, x, y).ratio() >= 0.8


def similar_names(a: str, b: str) -> bool:
    """A lexical guard for embedding-based merges of two name keys (embedding similarity alone
    merges "1990 FIFA World Cup" with "1994 FIFA World Cup", or "University of Toronto" with
    "Toronto"). True when the numbers agree and one of:

    * one is the other's acronym (``ibm`` / ``international business machines``);
    * the shorter is the tail of a short name without function words (a surname:
      ``puzo`` / ``mario puzo``, ``de niro`` / ``robert de niro``);
    * same number of words, each equal or - for Latin words longer than four letters - nearly so
      (``charles babbages`` / ``charles babbage``). CJK words must be equal.
    """
    if a == b:
        return True
    if digits(a) != digits(b):
        return False
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return False
    short, long = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(short) == 1 and len(long) > 1 and short[0] == "".join(w[0] for w in long if w not in FUNCTION_WORDS):
        return True
    if len(short) < len(long) <= 4 and long[-len(short):] == short and not set(long) & FUNCTION_WORDS:
        return True
    return len(ta) == len(tb) and all(_close_tokens(x, y) for x, y in zip(ta, tb))
