"""Normalisation of extracted values: dates to ISO, numbers with units, names and name keys.

* :func:`parse_date` - ``"March 5, 1902"``, ``"5 March 1902"``, ``"1902年3月5日"``, ``"1902-03-05"``,
  ``"20230821"``, ``"March 1902"``, ``"1902"`` -> ``"1902-03-05"`` / ``"1902-03"`` / ``"1902"``.
* :func:`parse_quantity` - ``"1,234.5 km"``, ``"12%"``, ``"$3.5 million"``, ``"3.2亿元"`` ->
  ``Quantity(value, unit)``.
* :func:`normalise_name` - whitespace, quotes, tokeniser artefacts (``"Person - centered"``),
  shouting capitals; :func:`name_key` (from :mod:`kag_neo4j.builder.names`, re-exported) - the
  comparison key entity resolution uses (NFKC, case folded, accents, punctuation and leading
  articles removed).
* :func:`normalise_extraction` applies all of it to a :class:`ChunkExtraction`.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
import unicodedata
from collections.abc import Mapping

from pydantic import BaseModel

from kag_neo4j.builder.names import name_key
from kag_neo4j.builder.records import ChunkExtraction, ExtractedEntity, PropertyValue

__all__ = [
    "Quantity",
    "name_key",
    "normalise_extraction",
    "normalise_name",
    "normalise_properties",
    "normalise_value",
    "normalise_whitespace",
    "parse_date",
    "parse_quantity",
]

# --------------------------------------------------------------------------- dates

_MONTHS: dict[str, int] = {}
for _number in range(1, 13):
    _MONTHS[calendar.month_name[_number].casefold()] = _number
    _MONTHS[calendar.month_abbr[_number].casefold()] = _number
_MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ORD = r"(?:st|nd|rd|th)?"
_ERA = r"(?:\s*(?:AD|A\.D\.|CE|C\.E\.))?"

_DATE_PATTERNS: list[re.Pattern[str]] = [
    re.compile(r"(?P<year>\d{4})-(?P<month>\d{1,2})-(?P<day>\d{1,2})(?:[T ][\d:.+\-Z]*)?"),
    re.compile(r"(?P<year>\d{4})[/.](?P<month>\d{1,2})[/.](?P<day>\d{1,2})"),
    re.compile(r"(?P<year>[12]\d{3})(?P<month>[01]\d)(?P<day>[0-3]\d)"),
    re.compile(r"(?P<year>\d{4})-(?P<month>\d{1,2})"),
    re.compile(_MONTH + r"\s+(?P<day>\d{1,2})" + _ORD + r",?\s+(?P<year>\d{1,4})" + _ERA, re.IGNORECASE),
    re.compile(
        r"(?:the\s+)?(?P<day>\d{1,2})" + _ORD + r"\s+(?:of\s+)?" + _MONTH + r",?\s+(?P<year>\d{1,4})" + _ERA,
        re.IGNORECASE,
    ),
    re.compile(_MONTH + r",?\s+(?P<year>\d{3,4})" + _ERA, re.IGNORECASE),
    re.compile(r"(?P<year>\d{3,4})" + _ERA, re.IGNORECASE),
    re.compile(r"(?P<year>\d{1,4})\s*(?:AD|A\.D\.|CE|C\.E\.)", re.IGNORECASE),
]
_NUMERIC_DMY = re.compile(r"(?P<a>\d{1,2})[/.\-](?P<b>\d{1,2})[/.\-](?P<year>\d{4})")
_PREFIX = re.compile(r"^(?:on|in|since|from|c\.|ca\.|circa|about|around|约|于|在)\s*", re.IGNORECASE)

_CN_DIGITS = {
    "〇": 0,
    "零": 0,
    "○": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN_NUMBER = r"[0-9〇零○一二两三四五六七八九十]+"
_CN_DATE = re.compile(
    r"(?:公元)?(?P<year>" + _CN_NUMBER + r")\s*年"
    r"(?:\s*(?P<month>" + _CN_NUMBER + r")\s*月(?:\s*(?P<day>" + _CN_NUMBER + r")\s*[日号])?)?"
)


def _cn_int(text: str) -> int | None:
    """``"1902"``, ``"一九〇二"`` (digit by digit), ``"十二"``, ``"二十五"`` -> int."""
    if text.isdigit():
        return int(text)
    if "十" not in text:
        digits = [_CN_DIGITS.get(ch) for ch in text]
        if any(d is None for d in digits):
            return None
        return int("".join(str(d) for d in digits))
    tens, _, ones = text.partition("十")
    high = _CN_DIGITS.get(tens, None) if tens else 1
    low = _CN_DIGITS.get(ones, None) if ones else 0
    if high is None or low is None:
        return None
    return high * 10 + low


def _iso(year: int, month: int | None = None, day: int | None = None) -> str | None:
    if not 1 <= year <= 9999:
        return None
    if month is None:
        return f"{year:04d}"
    if not 1 <= month <= 12:
        return None
    if day is None:
        return f"{year:04d}-{month:02d}"
    try:
        dt.date(year, month, day)
    except ValueError:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _month(value: str) -> int | None:
    if value.isdigit():
        return int(value)
    return _MONTHS.get(value.casefold().rstrip("."))


def parse_date(text: str, *, dayfirst: bool = False) -> str | None:
    """An ISO date (``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``) for the whole of ``text``, else None.

    ``dd/mm/yyyy`` vs ``mm/dd/yyyy`` is decided by a part above 12, else by ``dayfirst``.
    """
    if not isinstance(text, str):
        return None
    value = unicodedata.normalize("NFKC", text).strip().rstrip(".,;")
    value = _PREFIX.sub("", value).strip()
    if not value or len(value) > 40:
        return None
    match = _CN_DATE.fullmatch(value)
    if match:
        year = _cn_int(match.group("year"))
        month = _cn_int(match.group("month")) if match.group("month") else None
        day = _cn_int(match.group("day")) if match.group("day") else None
        return _iso(year, month, day) if year is not None else None
    match = _NUMERIC_DMY.fullmatch(value)
    if match:
        a, b, year = int(match.group("a")), int(match.group("b")), int(match.group("year"))
        if a > 12 or (dayfirst and b <= 12):
            return _iso(year, b, a)
        return _iso(year, a, b)
    for pattern in _DATE_PATTERNS:
        match = pattern.fullmatch(value)
        if not match:
            continue
        groups = match.groupdict()
        year = int(groups["year"])
        month = _month(groups["month"]) if groups.get("month") else None
        day = int(groups["day"]) if groups.get("day") else None
        if month is None and groups.get("month"):
            return None
        return _iso(year, month, day)
    return None


# --------------------------------------------------------------------------- numbers


class Quantity(BaseModel):
    """A number with its unit (``None`` for a bare number); ``%`` for percentages."""

    value: int | float
    unit: str | None = None


_CURRENCY_SYMBOLS = {
    "$": "USD",
    "us$": "USD",
    "usd": "USD",
    "€": "EUR",
    "eur": "EUR",
    "£": "GBP",
    "gbp": "GBP",
    "¥": "CNY",
    "￥": "CNY",
    "rmb": "CNY",
    "cny": "CNY",
    "jpy": "JPY",
    "hk$": "HKD",
    "hkd": "HKD",
    "元": "CNY",
    "人民币": "CNY",
    "美元": "USD",
    "欧元": "EUR",
    "英镑": "GBP",
    "日元": "JPY",
    "港元": "HKD",
    "dollars": "USD",
    "dollar": "USD",
    "euros": "EUR",
    "euro": "EUR",
    "pounds": "GBP",
    "yuan": "CNY",
}
_SCALES = {
    "thousand": 1e3,
    "k": 1e3,
    "million": 1e6,
    "mn": 1e6,
    "m": 1e6,
    "billion": 1e9,
    "bn": 1e9,
    "b": 1e9,
    "trillion": 1e12,
    "tn": 1e12,
    "千": 1e3,
    "万": 1e4,
    "十万": 1e5,
    "百万": 1e6,
    "千万": 1e7,
    "亿": 1e8,
    "万亿": 1e12,
}
_PERCENT = {"%": "%", "％": "%", "percent": "%", "per cent": "%", "pct": "%"}
_QUANTITY = re.compile(
    r"^(?P<cur>us\$|hk\$|[$€£¥￥]|usd|eur|gbp|cny|rmb|jpy|hkd)?\s*"
    r"(?P<sign>[-+−])?\s*"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"\s*(?P<rest>.*)$",
    re.IGNORECASE,
)
_SCALE_WORD = re.compile(
    r"^(?P<scale>万亿|十万|百万|千万|thousand|million|billion|trillion|mn|bn|tn|[千万亿]|k|m|b)(?![a-z])\s*",
    re.IGNORECASE,
)


def parse_quantity(text: str) -> Quantity | None:
    """A number (with separators, scale words, currency, percent or a short unit), else None.

    ``"1,234"`` -> 1234; ``"12.5%"`` -> 12.5 ``%``; ``"$3.5 million"`` -> 3500000 ``USD``;
    ``"3.2亿元"`` -> 320000000 ``CNY``; ``"42 km"`` -> 42 ``km``. A digit string with a leading
    zero (``"007"``) is an identifier, not a number.
    """
    if not isinstance(text, str):
        return None
    value = unicodedata.normalize("NFKC", text).strip()
    if not value or len(value) > 60:
        return None
    match = _QUANTITY.match(value)
    if not match:
        return None
    raw = match.group("num").replace(",", "")
    if len(raw) > 1 and raw[0] == "0" and raw[1].isdigit():
        return None
    number = float(raw)
    is_int = "." not in raw
    rest = match.group("rest").strip()
    unit: str | None = None
    if match.group("cur"):
        unit = _CURRENCY_SYMBOLS[match.group("cur").casefold()]
    scale = _SCALE_WORD.match(rest)
    if scale and not (scale.group("scale").casefold() in ("m", "b") and unit is None):
        number *= _SCALES[scale.group("scale").casefold()]
        rest = rest[scale.end() :].strip()
        is_int = number == int(number)
    if rest:
        lowered = rest.casefold()
        if lowered in _PERCENT:
            if unit is not None:
                return None
            unit = "%"
        elif lowered in _CURRENCY_SYMBOLS and unit is None:
            unit = _CURRENCY_SYMBOLS[lowered]
        elif (
            unit is None
            and len(rest) <= 20
            and not re.search(r"\d", rest)
            and re.fullmatch(r"[^\W\d_][\w/²³°.\- ]*", rest)
        ):
            unit = rest
        else:
            return None
    if match.group("sign") in ("-", "−"):
        number = -number
    final: int | float = int(number) if is_int and number == int(number) else number
    return Quantity(value=final, unit=unit)


# --------------------------------------------------------------------------- names

_QUOTES = "\"'“”‘’«»「」『』《》`"
_SPACED_HYPHEN = re.compile(r"(?<=\w) - (?=\w)")
_SPACED_APOSTROPHE = re.compile(r"(?<=\w) (['’]s)\b")
_SPACE_BEFORE = re.compile(r" +([,.;:!?%)\]])")
_SPACE_AFTER = re.compile(r"([(\[]) +")


def normalise_whitespace(text: str) -> str:
    """NFKC, every run of whitespace as one space, trimmed."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()


def normalise_name(name: str) -> str:
    """A display name cleaned up: whitespace, wrapping quotes, spaced punctuation, SHOUTING.

    ``"  Person - centered  therapy "`` -> ``"Person-centered therapy"``;
    ``"“Real Madrid”"`` -> ``"Real Madrid"``; ``"REAL MADRID CLUB"`` -> ``"Real Madrid Club"``
    (all-capital names of several long words only; ``"NASA"`` stays).
    """
    value = normalise_whitespace(str(name)).strip(" ,;:")
    while len(value) >= 2 and value[0] in _QUOTES and value[-1] in _QUOTES:
        value = value[1:-1].strip(" ,;:")
    value = _SPACED_HYPHEN.sub("-", value)
    value = _SPACED_APOSTROPHE.sub(r"\1", value)
    value = _SPACE_BEFORE.sub(r"\1", value)
    value = _SPACE_AFTER.sub(r"\1", value)
    words = value.split(" ")
    if len(words) > 1 and value.isupper() and all(len(w) >= 4 for w in words if w.isalpha()):
        value = " ".join(w.capitalize() if w.isalpha() else w for w in words)
    return value


# --------------------------------------------------------------------------- extractions

_DATE_KEY = re.compile(
    r"date|time|day|year|born|birth|died|death|founded|established|start|end|since|until|"
    r"日期|时间|年份|生日|成立|出生|逝世",
    re.IGNORECASE,
)
DATE_TYPES = frozenset({"date", "time", "日期", "时间"})
NUMBER_TYPES = frozenset({"number", "quantity", "money", "percent", "数字", "数量", "金额"})


def normalise_value(key: str, value: PropertyValue, *, dayfirst: bool = False) -> tuple[PropertyValue, str | None]:
    """``(value, unit)``: a date-like key gives an ISO date; a quantity gives a number and unit."""
    if not isinstance(value, str):
        return value, None
    text = normalise_whitespace(value)
    if not text:
        return text, None
    if _DATE_KEY.search(key):
        iso = parse_date(text, dayfirst=dayfirst)
        if iso is not None:
            return iso, None
    elif re.search(r"[A-Za-z\u4e00-\u9fff]", text) and re.search(r"\d", text):
        iso = parse_date(text, dayfirst=dayfirst)
        if iso is not None and len(iso) > 4:
            return iso, None
    quantity = parse_quantity(text)
    if quantity is not None:
        return quantity.value, quantity.unit
    return text, None


def normalise_properties(
    properties: Mapping[str, PropertyValue], *, dayfirst: bool = False
) -> dict[str, PropertyValue]:
    """Each value through :func:`normalise_value`; a unit goes to ``<key>_unit`` (if that key is free)."""
    result: dict[str, PropertyValue] = {}
    for key, value in properties.items():
        normalised, unit = normalise_value(key, value, dayfirst=dayfirst)
        result[key] = normalised
        if unit is not None and f"{key}_unit" not in properties:
            result[f"{key}_unit"] = unit
    return result


def _normalise_entity(entity: ExtractedEntity, dayfirst: bool) -> ExtractedEntity:
    name = normalise_name(entity.name) or entity.name.strip()
    aliases = [normalise_name(alias) for alias in entity.aliases]
    properties = normalise_properties(entity.properties, dayfirst=dayfirst)
    kind = entity.type.casefold()
    if kind in DATE_TYPES:
        iso = parse_date(name, dayfirst=dayfirst)
        if iso is not None and iso != name:
            aliases.append(name)
            name = iso
    elif kind in NUMBER_TYPES:
        quantity = parse_quantity(name)
        if quantity is not None:
            properties.setdefault("value", quantity.value)
            if quantity.unit:
                properties.setdefault("unit", quantity.unit)
    own = name_key(name)
    unique = list(dict.fromkeys(alias for alias in aliases if alias and name_key(alias) != own))
    return entity.model_copy(
        update={
            "name": name,
            "aliases": unique,
            "description": normalise_whitespace(entity.description),
            "properties": properties,
            "type": normalise_whitespace(entity.type) or "Entity",
        }
    )


def normalise_extraction(extraction: ChunkExtraction, *, dayfirst: bool = False) -> ChunkExtraction:
    """Names, dates, numbers and units of one chunk's extraction, normalised consistently.

    A date entity renamed to ISO (``"March 5, 1902"`` -> ``"1902-03-05"``) keeps its old name as
    an alias, and relations and event roles that named it follow the rename.
    """
    renames: dict[str, str] = {}
    entities = []
    for entity in extraction.entities:
        normalised = _normalise_entity(entity, dayfirst)
        renames[normalise_name(entity.name)] = normalised.name
        entities.append(normalised)

    def ref(name: str) -> str:
        cleaned = normalise_name(name) or name.strip()
        return renames.get(cleaned, cleaned)

    relations = [
        relation.model_copy(
            update={
                "subject": ref(relation.subject),
                "object": ref(relation.object),
                "predicate": normalise_whitespace(relation.predicate),
                "properties": normalise_properties(relation.properties, dayfirst=dayfirst),
            }
        )
        for relation in extraction.relations
    ]
    events = [
        event.model_copy(
            update={
                "name": normalise_name(event.name) or event.name.strip(),
                "description": normalise_whitespace(event.description),
                "roles": {normalise_whitespace(role): ref(value) for role, value in event.roles.items()},
                "properties": normalise_properties(event.properties, dayfirst=dayfirst),
            }
        )
        for event in extraction.events
    ]
    return extraction.model_copy(update={"entities": entities, "relations": relations, "events": events})
