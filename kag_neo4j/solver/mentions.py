"""Entity mentions of a question, to seed Personalized PageRank through entity linking.

By default (``RetrievalConfig.question_ner`` off) they are the question's quoted strings and runs of
capitalised words (``Journal of Psychotherapy Integration``, ``Lothair II``, ``Simon & Simon``),
joined across lower-case connectors (``of``, ``the``, ``de`` ...), with the parts of a run joined
by ``and``, the bracketed qualifier encyclopaedias title pages with (``Summer Skin (Film)``), and
no question or function word opening a run. That takes under 0.1 ms; the builder's light NER
(``kag_neo4j.builder.extract.light``: spaCy for English, jiagu for Chinese), which reads questions
and passages with the same model, takes 4 ms and gave no better recall on the dev sets. The NER
still reads questions in a script without capitals (Chinese), and with ``question_ner`` every
question, its gaps filled by the capitalised spans.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kag_neo4j.errors import KagError

__all__ = ["capitalised_mentions", "question_mentions"]

_TOKEN = re.compile(r"[\w][\w'’.\-]*|&", re.UNICODE)  # "&" is a connector (Simon & Simon)
_POSSESSIVE = re.compile(r"['’]s$")
_QUOTED = re.compile(r"[\"“”«»]([^\"“”«»]{2,80})[\"“”«»]")
_QUALIFIER = re.compile(r"\s*\(([^()]{1,40})\)")
_CONNECTORS = {"of", "the", "de", "la", "le", "von", "van", "der", "del", "da", "di", "du", "and", "&"}
_QUESTION_WORDS = {
    "who", "whom", "whose", "what", "which", "when", "where", "why", "how", "is", "are", "was", "were",
    "do", "does", "did", "in", "on", "at", "the", "a", "an", "of", "for", "from", "by", "to", "and",
    "name", "this", "that", "these", "those", "as", "after", "before", "during", "since", "if",
    "both", "between", "can", "could", "has", "have", "had", "it", "its", "there", "than", "then",
    # other function words that open a sentence ("Besides Little Rock, ...")
    "about", "above", "according", "across", "against", "along", "also", "although", "among", "another", "any",
    "around", "because", "behind", "below", "besides", "beyond", "despite", "each", "every", "following",
    "he", "her", "his", "including", "into", "like", "many", "most", "my", "not", "other", "our", "over",
    "she", "some", "such", "their", "they", "though", "through", "under", "unlike", "until", "upon", "we",
    "while", "with", "within", "without", "you", "your",
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
    Alexandria Airport`` -> the whole run, ``Watertown Airport``, ``Alexandria Airport``); a run
    followed by a qualifier in brackets also yields the qualified name (``Summer Skin (Film)``, the
    way encyclopaedias title a page).
    """
    mentions: list[str] = [match.group(1).strip() for match in _QUOTED.finditer(text)]
    run: list[str] = []
    run_end = 0

    def close() -> None:
        while run and run[-1].casefold() in _CONNECTORS:
            run.pop()
        if run:
            run[-1] = _POSSESSIVE.sub("", run[-1])
            mention = " ".join(run)
            if mention.casefold() not in _QUESTION_WORDS and not mention.isdigit() and len(mention) > 1:
                mentions.append(mention)
                parts = [mention]
                if len(run) > 2 and "and" in run:
                    parts = []
                    for part in mention.split(" and "):
                        words = part.split()
                        while words and words[0].casefold() in _CONNECTORS:
                            words.pop(0)
                        if words:
                            parts.append(" ".join(words))
                    mentions.extend(parts)
                qualifier = _QUALIFIER.match(text, run_end)
                if qualifier:  # it qualifies the last name of the run
                    mentions.append(f"{parts[-1]} ({qualifier.group(1).strip()})")
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
            run_end = match.end()
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


def question_mentions(question: str, *, ner: bool) -> list[str]:
    """Entity mentions of ``question``: with ``ner``, the light NER's (when it is installed) plus
    capitalised n-grams it missed; without, the capitalised n-grams alone - unless the question is
    written in a script without capitals (Chinese), which only the NER can read."""
    # imported here: the builder's package is slow to import
    from kag_neo4j.builder.extract.language import detect_language

    if not ner and detect_language(question) == "en":
        return capitalised_mentions(question)
    found: list[str] = []
    try:
        found = [str(m).strip() for m in _light_ner()(question) if str(m).strip()]
    except KagError:  # the NER model is not installed: capitalised n-grams alone
        found = []
    for mention in capitalised_mentions(question):
        if not any(mention.casefold() in m.casefold() or m.casefold() in mention.casefold() for m in found):
            found.append(mention)
    return found
