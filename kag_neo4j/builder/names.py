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


def similar_names(a: str, b: str) -> bool:
    """A cheap lexical guard for embedding-based merges of two name keys.

    True when the numbers agree and one name's words are contained in the other's, one is
    the other's acronym, or the strings are close (difflib ratio >= 0.75). Embedding
    similarity alone merges "1990 FIFA World Cup" with "1994 FIFA World Cup"; this refuses.
    """
    if a == b:
        return True
    if digits(a) != digits(b):
        return False
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return False
    sa, sb = set(ta), set(tb)
    if sa <= sb or sb <= sa:
        return True
    for short, long in ((ta, tb), (tb, ta)):
        if len(short) == 1 and len(long) > 1 and short[0] == "".join(word[0] for word in long):
            return True
    from difflib import SequenceMatcher

    return SequenceMatcher(None, a, b).ratio() >= 0.75
