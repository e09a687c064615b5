"""Reading numbers, dates and comparable text out of retrieved values.

Retrieval binds aliases to whatever the graph or the text holds: ``1902``, ``"1,234 people"``,
``"45%"``, ``"6 March 1902"``, ``"1902年3月6日"``, ``["1902"]``. The Math evaluator and the
deterministic Sort/Deduce operators share these readers so that they agree on what a value means.
Nothing here evaluates code; every reader is a regular expression plus ``int``/``Decimal``.
"""

from __future__ import annotations

import datetime as _dt
import re
import unicodedata
from dataclasses import dataclass
from collections.abc import Mapping, Sequence
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from kag_neo4j.errors import OperatorError

__all__ = [
    "Number",
    "PartialDate",
    "as_date",
    "as_number",
    "format_value",
    "json_value",
    "normalise_text",
    "parse_date",
    "parse_number",
    "render_value",
    "unwrap_one",
    "value_kind",
]

Number = int | float

_MONTHS = {
    name: index
    for index, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<mname>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"

_MULTIPLIERS = {
    "thousand": Decimal(1_000),
    "million": Decimal(1_000_000),
    "billion": Decimal(1_000_000_000),
    "trillion": Decimal(1_000_000_000_000),
    "千": Decimal(1_000),
    "万": Decimal(10_000),
    "百万": Decimal(1_000_000),
    "千万": Decimal(10_000_000),
    "亿": Decimal(100_000_000),
    "万亿": Decimal(1_000_000_000_000),
}
_NUMBER = re.compile(
    r"(?P<sign>(?<![\w.])[-+\u2212])?"
    r"(?P<int>\d{1,3}(?:,\d{3})+|\d{1,3}(?:_\d{3})+|\d+)"
    r"(?P<frac>\.\d+)?"
    r"(?P<exp>[eE][-+]?\d{1,3}(?!\w))?"
    r"(?P<suffix>\s*(?:%|‰|percent\b|per cent\b|"
    r"(?:万亿|百万|千万|thousand|million|billion|trillion|千|万|亿)))?",
    re.IGNORECASE,
)

_ISO = re.compile(r"(?<!\d)(?P<y>\d{4})[-/.](?P<m>\d{1,2})(?:[-/.](?P<d>\d{1,2}))?(?![\d])")
_CJK = re.compile(r"(?<!\d)(?P<y>\d{4})\s*年\s*(?:(?P<m>\d{1,2})\s*月\s*(?:(?P<d>\d{1,2})\s*[日号])?)?")
_DMY = re.compile(
    r"(?<!\d)(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r",?\s+(?P<y>\d{4})(?!\d)",
    re.IGNORECASE,
)
_MDY = re.compile(
    r"(?<![a-z])" + _MONTH + r"\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y>\d{4})(?!\d)",
    re.IGNORECASE,
)
_MY = re.compile(r"(?<![a-z])" + _MONTH + r",?\s+(?P<y>\d{4})(?!\d)", re.IGNORECASE)
_YEAR_ONLY = re.compile(r"\s*(?:(?:in|year)\s+)?(?P<y>\d{4})\s*(?:年|AD|CE)?\s*", re.IGNORECASE)


@dataclass(frozen=True, order=True)
class PartialDate:
    """A calendar date that may lack its month or day (``1902``, ``1902-03``, ``1902-03-06``)."""

    year: int
    month: int | None = None
    day: int | None = None

    @property
    def is_complete(self) -> bool:
        return self.month is not None and self.day is not None

    def sort_key(self) -> tuple[int, int, int]:
        return (self.year, self.month or 0, self.day or 0)

    def to_date(self) -> _dt.date:
        """The full date; raises ``ValueError`` when month or day is unknown."""
        if not self.is_complete:
            raise ValueError(f"{self.isoformat()} has no {'month' if self.month is None else 'day'}")
        return _dt.date(self.year, self.month, self.day)  # type: ignore[arg-type]

    def isoformat(self) -> str:
        text = f"{self.year:04d}"
        if self.month is not None:
            text += f"-{self.month:02d}"
            if self.day is not None:
                text += f"-{self.day:02d}"
        return text

    @classmethod
    def from_date(cls, value: _dt.date) -> PartialDate:
        return cls(value.year, value.month, value.day)


def _make_date(year: str, month: int | str | None, day: str | None) -> PartialDate | None:
    y = int(year)
    m = int(month) if month is not None else None
    d = int(day) if day is not None else None
    if m is None:
        return PartialDate(y) if 1 <= y <= 9999 else None
    try:
        _dt.date(y, m, d or 1)
    except ValueError:
        return None
    return PartialDate(y, m, d)


def parse_date(value: object) -> PartialDate | None:
    """The one date ``value`` holds, or ``None``.

    Accepts ``datetime.date``/``datetime``, ISO-like text (``1902-03-06``, ``1902/3/6``,
    ``1902-03``), Chinese (``1902年3月6日``), English (``6 March 1902``, ``March 6, 1902``,
    ``March 1902``) and a bare four-digit year (``1902``). Text holding two different dates is
    ambiguous and gives ``None``.
    """
    if isinstance(value, _dt.datetime):
        return PartialDate.from_date(value.date())
    if isinstance(value, _dt.date):
        return PartialDate.from_date(value)
    if isinstance(value, PartialDate):
        return value
    if isinstance(value, bool) or not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value)
    found: list[tuple[int, int, PartialDate]] = []
    for pattern in (_ISO, _CJK, _DMY, _MDY, _MY):
        for match in pattern.finditer(text):
            groups = match.groupdict()
            month: int | str | None = groups.get("m")
            if groups.get("mname"):
                month = _MONTHS[groups["mname"].lower()]
            parsed = _make_date(groups["y"], month, groups.get("d"))
            if parsed is not None:
                found.append((match.start(), match.end(), parsed))
    if not found:
        year = _YEAR_ONLY.fullmatch(text)
        return _make_date(year["y"], None, None) if year else None
    # keep the longest of overlapping matches
    found.sort(key=lambda item: (item[0], -(item[1] - item[0])))
    kept: list[tuple[int, int, PartialDate]] = []
    for start, end, parsed in found:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, parsed))
    distinct = {parsed for _, _, parsed in kept}
    return kept[0][2] if len(distinct) == 1 else None


def _decimal_to_number(value: Decimal, *, force_float: bool = False) -> Number:
    if not force_float and value == value.to_integral_value():
        return int(value)
    return float(value)


def parse_number(value: object) -> Number | None:
    """The one number ``value`` holds, or ``None``.

    ``1902``, ``"1,234"``, ``"1_234"``, ``"-3.5 km"``, ``"45%"`` (0.45), ``"1.2万"`` (12000),
    ``"3.5 million"``, ``"€1,200"``. Text with two or more numbers (``"6 March 1902"``), or
    a date, gives ``None``; booleans are not numbers.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return value
    if isinstance(value, Decimal):
        return _decimal_to_number(value)
    if not isinstance(value, str):
        return None
    text = unicodedata.normalize("NFKC", value).strip()
    matches = list(_NUMBER.finditer(text))
    if len(matches) != 1:
        return None
    if parse_date(text) is not None and not _YEAR_ONLY.fullmatch(text):
        return None
    match = matches[0]
    digits = match["int"].replace(",", "").replace("_", "")
    try:
        number = Decimal(digits + (match["frac"] or "") + (match["exp"] or ""))
    except InvalidOperation:  # pragma: no cover - the regex only admits valid literals
        return None
    if match["sign"] and match["sign"] in "-\u2212":
        number = -number
    suffix = (match["suffix"] or "").strip().lower()
    if suffix in {"%", "percent", "per cent"}:
        return float(number / 100)
    if suffix == "‰":
        return float(number / 1000)
    if suffix:
        number *= _MULTIPLIERS[suffix]
    return _decimal_to_number(number, force_float=bool(match["exp"]) and number != int(number))


def normalise_text(value: object) -> str:
    """Text for equality tests: NFKC, case-folded, outer punctuation and spaces removed."""
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    text = " ".join(text.split())
    start, end = 0, len(text)
    while start < end and unicodedata.category(text[start])[0] in "PZ":
        start += 1
    while end > start and unicodedata.category(text[end - 1])[0] in "PZ":
        end -= 1
    return text[start:end]


# --------------------------------------------------------------------------------------------
# reading bound values (Sort, Deduce) and showing them


def unwrap_one(value: Any, what: str) -> Any:
    """The one value inside ``value`` (``[x]`` -> ``x``, ``[]`` -> ``None``); several values
    raise :class:`OperatorError` naming ``what``."""
    while isinstance(value, list | tuple):
        if len(value) == 1:
            value = value[0]
        elif not value:
            return None
        else:
            raise OperatorError(
                f"{what} holds {len(value)} values where one was expected: {render_value(value)}"
            )
    return value


def as_number(value: Any) -> int | float | None:
    """``value`` read as a number (never a bool), else ``None``."""
    if isinstance(value, bool):
        return None
    return parse_number(value)


def as_date(value: Any) -> PartialDate | None:
    """``value`` read as a date (a whole number 1..9999 is a year), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and 1 <= value <= 9999:
        return PartialDate(value)
    return parse_date(value)


def value_kind(values: Sequence[Any]) -> Literal["number", "date", "text"]:
    """The one reading all values share: numbers, else dates, else text."""
    if all(as_number(v) is not None for v in values):
        return "number"
    if all(as_date(v) is not None for v in values):
        return "date"
    return "text"


def render_value(value: Any) -> str:
    """Readable text of a bound value (for evidence, explanations and error messages)."""
    if value is None:
        return "(none)"
    if isinstance(value, PartialDate):
        return value.isoformat()
    if isinstance(value, bool | int | float | _dt.date):
        return format_value(value)
    if isinstance(value, Mapping):
        return "; ".join(f"{k}: {render_value(v)}" for k, v in value.items())
    if isinstance(value, list | tuple):
        return ", ".join(render_value(v) for v in value)
    return str(value)


def format_value(value: Any) -> str:
    """Text for an answer: integral floats lose ``.0``, floats keep 12 significant digits."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        return f"{value:.12g}"
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, list):
        return ", ".join(format_value(item) for item in value)
    return str(value)


def json_value(value: Any) -> Any:
    """A bound value made JSON- and Neo4j-friendly (dates as ISO text)."""
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [json_value(v) for v in value]
    return value
