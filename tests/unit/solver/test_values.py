"""Reading numbers and dates out of retrieved values."""

from __future__ import annotations

import datetime as dt

import pytest

from kag_neo4j.solver.values import (
    PartialDate,
    normalise_text,
    parse_date,
    parse_number,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1902", 1902),
        ("1,234", 1234),
        ("1_234", 1234),
        ("-3.5 km", -3.5),
        ("−7", -7),
        ("45%", 0.45),
        ("12 percent", 0.12),
        ("1.2万", 12000),
        ("3亿", 300_000_000),
        ("3.5 million", 3_500_000),
        ("€1,200", 1200),
        ("about 81,044 seats", 81044),
        ("COVID-19", 19),
        ("1e3", 1000.0),
        (7, 7),
        (2.5, 2.5),
        ("6 March 1902", None),
        ("1902-03-06", None),
        ("between 3 and 4", None),
        ("", None),
        ("Real Madrid", None),
        (True, None),
        (None, None),
    ],
)
def test_parse_number(text: object, expected: object) -> None:
    assert parse_number(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1902-03-06", PartialDate(1902, 3, 6)),
        ("1902/3/6", PartialDate(1902, 3, 6)),
        ("1902-03", PartialDate(1902, 3)),
        ("1902", PartialDate(1902)),
        ("in 1902", PartialDate(1902)),
        ("1902年3月6日", PartialDate(1902, 3, 6)),
        ("1902年", PartialDate(1902)),
        ("6 March 1902", PartialDate(1902, 3, 6)),
        ("6th of March, 1902", PartialDate(1902, 3, 6)),
        ("March 6, 1902", PartialDate(1902, 3, 6)),
        ("Sept. 1902", PartialDate(1902, 9)),
        ("founded on 6 March 1902 in Madrid", PartialDate(1902, 3, 6)),
        (dt.date(2011, 5, 1), PartialDate(2011, 5, 1)),
        ("from 1902-03-06 to 1903-01-01", None),  # two dates: ambiguous
        ("1902-02-30", None),
        ("1,234 people", None),
        ("Real Madrid", None),
    ],
)
def test_parse_date(text: object, expected: object) -> None:
    assert parse_date(text) == expected


def test_partial_date_helpers() -> None:
    assert PartialDate(1902, 3).isoformat() == "1902-03"
    assert PartialDate(1902, 3, 6).to_date() == dt.date(1902, 3, 6)
    with pytest.raises(ValueError):
        PartialDate(1902).to_date()


def test_normalise_text() -> None:
    assert normalise_text("  Real   Madrid C.F.  ") == "real madrid c.f"
    assert normalise_text("“Ｒｅａｌ Madrid”") == "real madrid"
