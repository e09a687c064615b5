"""Entity mentions of a question, to seed Personalized PageRank through entity linking.

The builder's light NER (``kag_neo4j.builder.extract.light``: spaCy for English, jiagu for
Chinese) finds them, so questions and passages are read by the same model; capitalised n-grams
it missed are added, and they are all there is when the NER model is not installed: quoted
strings and runs of capitalised words (``Journal of Psychotherapy Integration``,
``Lothair II``), joined across lower-case connectors (``of``, ``the``, ``de`` ...), with
question words and a capitalised first word that is a common word left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kag_neo4j.errors import KagError

__all__ = ["capitalised_mentions", "question_mentions"]

_TOKEN = re.compile(r"[\w][\w'’.\-]*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s$")
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,80})[\"“”«»]")
_CONNECTORS = {"of", "the", "de", "la", "le", "von", "van", "der", "del", "da", "di", "du", "and", "&"}
_QUESTION_WORDS = {
    "who", "whom", "whose", "what", "which", "when", "where", "why", "how", "is", "are", "was", "were",
    "do", "does", "did", "in", "on", "at", "the", "a", "an", "of", "for", "from", "by", "to", "and",
    "name", "this", "that", "these", "those", "as", "after", "before", "during", "since", "if",
    "both", "between", "can", "could", "has", "have", "had", "it", "its", "there", "than", "then",
}


def _starts_or_continues(token: str, lowered: str, index: int, run: list[str]) -> bool:
    """A capitalised word (not a question word opening the run), a number right after a name
    (``BWV 1033``), or a connector inside a run."""
    if token[0].isdigit():
        return bool(run) and run[-1].casefold() not in _CONNECTORS
    if token[0].isupper() and not (lowered in _QUESTION_WORDS and (index == 0 or not run)):
        return True
    return bool(run) and lowered in _CONNECTORS


def capitalised_mentions(text: str) -> list[str]:
    """Quoted strings and runs of capitalised words, in order of appearance, without repeats.

    Punctuation ends a run; a run joined by ``and`` also yields its parts (``Watertown Airport and
    Alexandria Airport`` -> the whole run, ``Watertown Airport``, ``Alexandria Airport``).
    """
    mentions: list[str] = [match.group(1).strip() for match in _QUOTED.finditer(text)]
    run: list[str] = []

    def close() -> None:
        while run and run[-1].casefold() in _CONNECTORS:
            run.pop()
        if run:
            run[-1] = _POSSESSIVE.sub("", run[-1])
            mention = " ".join(run)
            if mention.casefold() not in _QUESTION_WORDS and not mention.isdigit() and len(mention) > 1:
                mentions.append(mention)
                if len(run) > 2 and "and" in run:
                    for part in mention.split(" and "):
                        words = part.split()
                        while words and words[0].casefold() in _CONNECTORS:
                            words.pop(0)
                        if words:
                            mentions.append(" ".join(words))
        run.clear()

    previous_end = 0
    for index, match in enumerate(_TOKEN.finditer(text)):
        raw = match.group(0)
        token = raw.rstrip(".")
        # a full stop ends the sentence, unless it ends an initial (G.) or an abbreviation (U.S.)
        sentence_end = raw.endswith(".") and len(token) > 1 and "." not in token
        if text[previous_end : match.start()].strip():
            close()  # punctuation between the words
        previous_end = match.end()
        lowered = token.casefold()
        if not token:
            close()
        elif _starts_or_continues(token, lowered, index, run):
            run.append(token)
        else:
            close()
        if sentence_end:
            close()
    close()
    unique: list[str] = []
    for mention in mentions:
        if mention and mention.casefold() not in {m.casefold() for m in unique}:
            unique.append(mention)
    return unique


_extractor: Any = None  # the LightExtractor, built on first use


def _light_ner() -> Callable[[str], list[str]]:
    """The builder's light NER (spaCy / jiagu) as a mention extractor (imported on first use: the
    NER models load lazily and raise a KagError naming the install command when absent)."""
    from kag_neo4j.builder.extract.light import LightExtractor

    def extract(question: str) -> list[str]:
        global _extractor
        if _extractor is None:
            _extractor = LightExtractor()
        return _extractor.names(question)

    return extract


def question_mentions(question: str, *, ner: bool = True) -> list[str]:
    """Entity mentions of ``question``: the light NER's (when ``ner`` and it is installed), plus
    capitalised n-grams it missed."""
    found: list[str] = []
    extractor = _light_ner() if ner else None
    if extractor is not None:
        try:
            found = [str(m).strip() for m in extractor(question) if str(m).strip()]
        except KagError:  # the NER model is not installed: capitalised n-grams alone
            found = []
    for mention in capitalised_mentions(question):
        if not any(mention.casefold() in m.casefold() or m.casefold() in mention.casefold() for m in found):
            found.append(mention)
    return found
