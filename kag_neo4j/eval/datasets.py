"""Question sets and corpora in the HippoRAG / KAG formats, and their gold supporting passages.

Question formats (detected from the records, see :func:`detect_format`):

* ``musique`` - ``{id, question, answer, answer_aliases, paragraphs: [{idx, title, paragraph_text,
  is_supporting}]}``; gold passages are the supporting *paragraphs* (title + text);
* ``2wiki`` - ``{_id, question, answer, supporting_facts: [[title, sent]], evidences, ...}``;
* ``hotpotqa`` - ``{_id, question, answer, supporting_facts: [[title, sent]], context, ...}``;
  for both, gold passages are the supporting *titles*.

A file is a JSON list, a JSON object wrapping one (``{"data": [...]}``) or JSON lines.

Corpora are read with the builder's own readers (:func:`kag_neo4j.builder.readers.read_file`),
so every passage gets exactly the document id the loader gives it. Retrieved documents and gold
passages are then compared as *units*: the normalised title (title recall) or a key of the
normalised title and text (paragraph recall, where one title may have several paragraphs).
"""

from __future__ import annotations

import hashlib
import json
import os
import unicodedata
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from kag_neo4j.errors import EvalError, ReadError

__all__ = [
    "DATASET_ALIASES",
    "Corpus",
    "DatasetFiles",
    "GoldPassage",
    "Passage",
    "Question",
    "QuestionSet",
    "RecallUnit",
    "default_data_dir",
    "detect_format",
    "file_sha256",
    "load_corpus",
    "load_questions",
    "paragraph_unit",
    "resolve_dataset",
    "title_unit",
]

DatasetFormat = Literal["musique", "hotpotqa", "2wiki"]
RecallUnit = Literal["title", "paragraph"]

#: how each format defines a gold passage for recall
RECALL_UNITS: dict[str, RecallUnit] = {"musique": "paragraph", "hotpotqa": "title", "2wiki": "title"}

#: dataset shorthands accepted on the command line -> folder name under the benchmarks folder
DATASET_ALIASES: dict[str, str] = {
    "musique": "musique",
    "hotpotqa": "hotpotqa",
    "hotpot": "hotpotqa",
    "2wiki": "2wiki",
    "2wikimultihopqa": "2wiki",
    "twowiki": "2wiki",
}

#: question files looked for in a dataset folder, in this order
QUESTION_FILES: tuple[str, ...] = ("questions.dev.json", "questions.json", "questions.sample.json")
CORPUS_FILES: tuple[str, ...] = ("corpus.json", "corpus.jsonl")

#: question types only 2Wiki has (HotpotQA has bridge and comparison; 2Wiki also comparison)
_TWOWIKI_TYPES = {"compositional", "inference", "bridge_comparison"}
_WRAPPERS = ("data", "questions", "items", "records")


class GoldPassage(BaseModel):
    """A supporting passage: its title, and its text when the format gives it (MuSiQue)."""

    title: str
    text: str | None = None


class Question(BaseModel):
    id: str
    question: str
    answers: list[str] = Field(description="the gold answer first, then its aliases")
    gold: list[GoldPassage]
    type: str | None = None
    hop_answers: list[str] = Field(default_factory=list, description=(
        "the gold answers of the question's hops, when the format gives them (MuSiQue's question_decomposition, "
        "2Wiki's evidences); what graph-answered solver steps are checked against (kag_neo4j.eval.steps)"))


class QuestionSet(BaseModel):
    name: str
    format: DatasetFormat
    path: Path
    sha256: str
    recall_unit: RecallUnit
    questions: list[Question]

    def gold_units(self, question: Question) -> list[str]:
        """The distinct units of the question's supporting passages, in order."""
        units: list[str] = []
        for passage in question.gold:
            unit = unit_of(self.recall_unit, passage.title, passage.text or "")
            if unit not in units:
                units.append(unit)
        return units


class Passage(BaseModel):
    document_id: str
    title: str
    text: str


class Corpus(BaseModel):
    """The passages of a corpus file with the document ids the builder gives them."""

    path: Path
    sha256: str
    passages: list[Passage]

    def units(self, recall_unit: RecallUnit) -> dict[str, str]:
        """document id -> unit."""
        return {p.document_id: unit_of(recall_unit, p.title, p.text) for p in self.passages}

    @property
    def document_ids(self) -> list[str]:
        return [p.document_id for p in self.passages]


class DatasetFiles(BaseModel):
    name: str
    questions: Path
    corpus: Path


def _clean(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def title_unit(title: str) -> str:
    """A title as a recall unit: NFKC, whitespace squeezed, case-folded."""
    return _clean(title).casefold()


def paragraph_unit(title: str, text: str) -> str:
    """A paragraph as a recall unit: its normalised title plus a hash of its normalised text."""
    digest = hashlib.sha1(_clean(text).casefold().encode("utf-8")).hexdigest()[:12]
    return f"{title_unit(title)}#{digest}"


def unit_of(recall_unit: RecallUnit, title: str, text: str) -> str:
    return title_unit(title) if recall_unit == "title" else paragraph_unit(title, text)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- question files ------------------------------------------------------------------------------


def _read_records(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise EvalError(f"question file {path} does not exist; check the path")
    text = path.read_text(encoding="utf-8-sig")
    value: Any
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        lines = [line for line in text.splitlines() if line.strip()]
        try:
            value = [json.loads(line) for line in lines]
        except json.JSONDecodeError:
            raise EvalError(
                f"question file {path} is neither JSON nor JSON lines ({exc.msg} at line {exc.lineno}); fix the file"
            ) from exc
    if isinstance(value, dict):
        if "question" in value:  # a file of one record (or JSON lines with one line)
            value = [value]
        for key in _WRAPPERS:
            if isinstance(value, dict) and isinstance(value.get(key), list):
                value = value[key]
                break
    if not isinstance(value, list) or not value:
        raise EvalError(f"question file {path} must hold a non-empty list of question records")
    records = [item for item in value if isinstance(item, dict)]
    if len(records) != len(value):
        raise EvalError(f"question file {path}: every item must be a JSON object with a 'question' field")
    return records


def detect_format(records: list[dict[str, Any]], *, source: str = "the question file") -> DatasetFormat:
    """``musique``, ``2wiki`` or ``hotpotqa``, from the fields of the first records."""
    sample = records[:5]
    if not all("question" in item for item in sample):
        raise EvalError(
            f"{source} has records without a 'question' field; expected MuSiQue, HotpotQA or 2Wiki "
            "question records (is it a corpus? pass a corpus with --corpus)"
        )
    if all(isinstance(item.get("paragraphs"), list) for item in sample):
        return "musique"
    if all(isinstance(item.get("supporting_facts"), list) for item in sample):
        if any("evidences" in item or "entity_ids" in item or item.get("type") in _TWOWIKI_TYPES for item in sample):
            return "2wiki"
        return "hotpotqa"
    raise EvalError(
        f"{source}: cannot tell the format; expected MuSiQue records (paragraphs with is_supporting) or "
        "HotpotQA / 2Wiki records (supporting_facts [[title, sentence]])"
    )


def _answers(item: dict[str, Any], source: str) -> list[str]:
    raw = item.get("answer", item.get("answers"))
    answers = [raw] if isinstance(raw, str) else list(raw) if isinstance(raw, list) else []
    aliases = item.get("answer_aliases") or item.get("aliases") or []
    result: list[str] = []
    for answer in [*answers, *aliases]:
        if isinstance(answer, str) and answer.strip() and answer not in result:
            result.append(answer)
    if not result:
        raise EvalError(f"{source}: question {item.get('question')!r} has no answer; give it an 'answer' field")
    return result


def _musique_gold(item: dict[str, Any], source: str) -> list[GoldPassage]:
    gold = []
    for paragraph in item["paragraphs"]:
        if not isinstance(paragraph, dict) or "title" not in paragraph:
            raise EvalError(f"{source}: a paragraph of question {item.get('id')!r} has no title")
        if paragraph.get("is_supporting"):
            text = paragraph.get("paragraph_text", paragraph.get("text"))
            if not isinstance(text, str):
                raise EvalError(f"{source}: a supporting paragraph of question {item.get('id')!r} has no paragraph_text")
            gold.append(GoldPassage(title=paragraph["title"], text=text))
    return gold


def _title_gold(item: dict[str, Any], source: str) -> list[GoldPassage]:
    titles: list[str] = []
    for fact in item["supporting_facts"]:
        title = fact[0] if isinstance(fact, list) and fact else fact if isinstance(fact, str) else None
        if not isinstance(title, str):
            raise EvalError(f"{source}: supporting_facts of question {item.get('question')!r} must be [title, sentence]")
        if title not in titles:
            titles.append(title)
    return [GoldPassage(title=title) for title in titles]


def _hop_answers(item: dict[str, Any], fmt: DatasetFormat) -> list[str]:
    """The intermediate answers a record states: MuSiQue's decomposition answers, the objects of 2Wiki's
    evidence triples (``[subject, relation, object]``); HotpotQA gives none. Malformed entries are skipped
    (they only cost a question its step score)."""
    if fmt == "musique":
        hops = item.get("question_decomposition")
        found = [hop.get("answer") for hop in hops if isinstance(hop, dict)] if isinstance(hops, list) else []
    elif fmt == "2wiki":
        triples = item.get("evidences")
        found = [t[2] for t in triples if isinstance(t, list) and len(t) == 3] if isinstance(triples, list) else []
    else:
        found = []
    return list(dict.fromkeys(a.strip() for a in found if isinstance(a, str) and a.strip()))


def load_questions(path: Path | str, *, name: str | None = None, limit: int | None = None) -> QuestionSet:
    """Read a question file in any of the three formats (the first ``limit`` questions)."""
    file = Path(path)
    records = _read_records(file)
    fmt = detect_format(records, source=str(file))
    if limit is not None:
        if limit < 1:
            raise EvalError(f"--limit must be at least 1, got {limit}")
        records = records[:limit]
    questions = []
    seen: set[str] = set()
    for index, item in enumerate(records):
        qid = str(item.get("id", item.get("_id", index)))
        if qid in seen:
            qid = f"{qid}~{index}"
        seen.add(qid)
        if not isinstance(item.get("question"), str) or not item["question"].strip():
            raise EvalError(f"{file}: record {index} has an empty 'question'")
        gold = _musique_gold(item, str(file)) if fmt == "musique" else _title_gold(item, str(file))
        questions.append(
            Question(id=qid, question=item["question"].strip(), answers=_answers(item, str(file)), gold=gold,
                     type=item.get("type") if isinstance(item.get("type"), str) else None,
                     hop_answers=_hop_answers(item, fmt))
        )
    return QuestionSet(
        name=name or file.parent.name or file.stem,
        format=fmt,
        path=file,
        sha256=file_sha256(file),
        recall_unit=RECALL_UNITS[fmt],
        questions=questions,
    )


# --- corpora -------------------------------------------------------------------------------------


def load_corpus(path: Path | str) -> Corpus:
    """The passages of a corpus file, read by the builder's readers (same document ids)."""
    from kag_neo4j.builder.readers import read_file

    file = Path(path)
    if not file.is_file():
        raise EvalError(f"corpus file {file} does not exist; check --corpus (or the dataset folder)")
    try:
        documents = read_file(file)
    except ReadError as exc:
        raise EvalError(f"corpus file {exc}") from exc
    passages = [Passage(document_id=d.id, title=d.title, text=d.text) for d in documents if d.text]
    if not passages:
        raise EvalError(
            f"corpus file {file} holds no passages; expected [{{title, text}}] (MuSiQue/2Wiki) or "
            "{title: [sentences]} (HotpotQA)"
        )
    return Corpus(path=file, sha256=file_sha256(file), passages=passages)


def check_not_questions(path: Path) -> None:
    """Refuse a question file given as a corpus (a common mix-up of the two arguments)."""
    try:
        records = _read_records(path)
    except EvalError:
        return
    if all("question" in item for item in records[:5]):
        raise EvalError(f"{path} is a question file, not a corpus; pass the passages file with --corpus")


def missing_gold(questions: QuestionSet, corpus: Corpus) -> list[tuple[str, str]]:
    """(question id, passage title) of every gold passage the corpus does not hold."""
    units = set(corpus.units(questions.recall_unit).values())
    missing = []
    for question in questions.questions:
        for passage in question.gold:
            if unit_of(questions.recall_unit, passage.title, passage.text or "") not in units:
                missing.append((question.id, passage.title))
    return missing


# --- dataset shorthands --------------------------------------------------------------------------


def default_data_dir(cwd: Path | None = None) -> Path | None:
    """``KAG_BENCHMARKS_DIR``, else ``../shared/benchmarks`` relative to the working directory."""
    env = os.environ.get("KAG_BENCHMARKS_DIR")
    if env:
        return Path(env)
    candidate = (cwd or Path.cwd()) / ".." / "shared" / "benchmarks"
    return candidate.resolve() if candidate.is_dir() else None


def _first_existing(folder: Path, names: Iterable[str]) -> Path | None:
    for name in names:
        if (folder / name).is_file():
            return folder / name
    return None


def _from_folder(name: str, folder: Path) -> DatasetFiles:
    questions = _first_existing(folder, QUESTION_FILES)
    if questions is None:
        others = sorted(folder.glob("questions*.json*"))
        questions = others[0] if others else None
    corpus = _first_existing(folder, CORPUS_FILES)
    if questions is None or corpus is None:
        what = "a questions*.json file" if questions is None else "corpus.json"
        raise EvalError(f"dataset folder {folder} has no {what}; it needs questions.dev.json and corpus.json")
    return DatasetFiles(name=name, questions=questions, corpus=corpus)


def resolve_dataset(dataset: str, *, corpus: Path | None = None, data_dir: Path | None = None) -> DatasetFiles:
    """Question and corpus files for a shorthand (``musique``), a dataset folder, or a question file.

    A question file needs ``corpus``; a shorthand is looked up in ``data_dir`` (``--data-dir``,
    ``KAG_BENCHMARKS_DIR`` or ``../shared/benchmarks``).
    """
    path = Path(dataset)
    if path.is_file():
        if corpus is None:
            raise EvalError(f"{path} is a question file; name its passages with --corpus CORPUS.json")
        check_not_questions(corpus)
        return DatasetFiles(name=path.stem, questions=path, corpus=corpus)
    if path.is_dir():
        files = _from_folder(path.name, path)
        return files if corpus is None else files.model_copy(update={"corpus": corpus})
    key = DATASET_ALIASES.get(dataset.casefold())
    if key is None:
        raise EvalError(
            f"unknown dataset {dataset!r}: give one of {', '.join(sorted(set(DATASET_ALIASES.values())))}, "
            "a dataset folder, or a question file with --corpus"
        )
    root = data_dir or default_data_dir()
    if root is None:
        raise EvalError(
            f"dataset {dataset!r} needs the benchmarks folder: pass --data-dir or set KAG_BENCHMARKS_DIR "
            "(no ../shared/benchmarks next to the working directory)"
        )
    folder = root / key
    if not folder.is_dir():
        raise EvalError(f"benchmarks folder {root} has no {key}/ folder; check --data-dir / KAG_BENCHMARKS_DIR")
    files = _from_folder(key, folder)
    return files if corpus is None else files.model_copy(update={"corpus": corpus})
