"""The quickstart's sample corpus (our own, English and Chinese) and its questions."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

_HERE = Path(__file__).resolve().parent


class SampleQuestion(BaseModel):
    question: str
    answer: str
    language: str


def corpus_dir() -> Path:
    return _HERE / "corpus"


def sample_questions() -> list[SampleQuestion]:
    data = json.loads((_HERE / "questions.json").read_text(encoding="utf-8"))
    return [SampleQuestion(**item) for item in data]
