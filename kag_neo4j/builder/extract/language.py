"""Which language a chunk is in, by the share of CJK characters among its letters."""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["en", "zh"]

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


def cjk_ratio(text: str) -> float:
    """CJK ideographs / all letters (0.0 for text without letters)."""
    letters = len(_LETTER.findall(text))
    return len(_CJK.findall(text)) / letters if letters else 0.0


def detect_language(text: str, *, threshold: float = 0.2) -> Language:
    """``zh`` when at least ``threshold`` of the letters are CJK ideographs, else ``en``.

    A ratio rather than "any CJK" keeps an English passage that quotes one Chinese name English.
    """
    return "zh" if cjk_ratio(text) >= threshold else "en"
