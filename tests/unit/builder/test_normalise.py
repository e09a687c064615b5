"""Normalisation tables: dates, quantities, names, and whole extractions."""

from __future__ import annotations

import pytest

from kag_neo4j.builder.normalise import (
    Quantity,
    name_key,
    normalise_extraction,
    normalise_name,
    normalise_properties,
    parse_date,
    parse_quantity,
)
from kag_neo4j.builder.records import ChunkExtraction, ExtractedEntity, ExtractedEvent, ExtractedRelation


@pytest.mark.parametrize(
    ("text", "iso"),
    [
        ("March 5, 1902", "1902-03-05"),
        ("March 5th 1902", "1902-03-05"),
        ("Mar. 5, 1902", "1902-03-05"),
        ("5 March 1902", "1902-03-05"),
        ("the 5th of March, 1902", "1902-03-05"),
        ("11 November 875", "0875-11-11"),
        ("1902年3月5日", "1902-03-05"),
        ("1902年3月5号", "1902-03-05"),
        ("一九〇二年三月五日", "1902-03-05"),
        ("2023年十二月二十五日", "2023-12-25"),
        ("1902年3月", "1902-03"),
        ("1902年", "1902"),
        ("1902-03-05", "1902-03-05"),
        ("2018-06-01T10:00:00Z", "2018-06-01"),
        ("1902/3/5", "1902-03-05"),
        ("20230821", "2023-08-21"),
        ("March 1902", "1902-03"),
        ("1902", "1902"),
        ("in 1902", "1902"),
        ("c. 1900", "1900"),
        ("13/03/1902", "1902-03-13"),
        ("03/13/1902", "1902-03-13"),
        ("5 AD", "0005"),
    ],
)
def test_dates_to_iso(text: str, iso: str) -> None:
    assert parse_date(text) == iso


@pytest.mark.parametrize("text", ["", "hello", "42", "Feb 30, 1902", "2009 to 2018", "20231399", "March", "1902-13-01"])
def test_non_dates(text: str) -> None:
    assert parse_date(text) is None


def test_ambiguous_numeric_dates_follow_dayfirst() -> None:
    assert parse_date("05/03/1902") == "1902-05-03"
    assert parse_date("05/03/1902", dayfirst=True) == "1902-03-05"


@pytest.mark.parametrize(
    ("text", "value", "unit"),
    [
        ("1,234", 1234, None),
        ("1,234.5", 1234.5, None),
        ("-5", -5, None),
        ("0.5", 0.5, None),
        ("12%", 12, "%"),
        ("12.5 percent", 12.5, "%"),
        ("$3.5 million", 3_500_000, "USD"),
        ("$5m", 5_000_000, "USD"),
        ("USD 100", 100, "USD"),
        ("€12", 12, "EUR"),
        ("1.5bn", 1_500_000_000, None),
        ("3.2亿元", 320_000_000, "CNY"),
        ("1.2万", 12_000, None),
        ("500 美元", 500, "USD"),
        ("42 km", 42, "km"),
        ("5 m", 5, "m"),
        ("120 people", 120, "people"),
    ],
)
def test_quantities(text: str, value: float, unit: str | None) -> None:
    assert parse_quantity(text) == Quantity(value=value, unit=unit)
    assert isinstance(parse_quantity(text).value, type(value))


@pytest.mark.parametrize("text", ["007", "12 34", "3 and 4", "CSF0000001579", "150****3237", "about five", "$12%"])
def test_non_quantities(text: str) -> None:
    assert parse_quantity(text) is None


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("  Person - centered  therapy ", "Person-centered therapy"),
        ("“Real Madrid”", "Real Madrid"),
        ("'Madrid',", "Madrid"),
        ("St. Maurice 's Abbey", "St. Maurice's Abbey"),
        ("REAL MADRID CLUB", "Real Madrid Club"),
        ("NASA", "NASA"),
        ("AT&T INC", "AT&T INC"),
        ("Ｒｅａｌ　Ｍａｄｒｉｄ", "Real Madrid"),
        ("皇家 马德里", "皇家 马德里"),
    ],
)
def test_names(raw: str, clean: str) -> None:
    assert normalise_name(raw) == clean


def test_name_key_folds_case_accents_punctuation_and_articles() -> None:
    assert name_key("The Beatles") == name_key("beatles") == "beatles"
    assert name_key("Beyoncé") == name_key("BEYONCE")
    assert name_key("Real Madrid C.F.") == name_key("real madrid c f")
    assert name_key("皇家马德里") == "皇家马德里"


def test_properties_get_iso_dates_numbers_and_units() -> None:
    result = normalise_properties(
        {
            "founded": "March 6, 1902",
            "transDate": "20230821",
            "amount": "$3.5 million",
            "age": "38",
            "code": "007",
            "share": "12%",
            "note": "born on 5 May 1990",
            "flag": True,
        }
    )
    assert result == {
        "founded": "1902-03-06",
        "transDate": "2023-08-21",
        "amount": 3_500_000,
        "amount_unit": "USD",
        "age": 38,
        "code": "007",
        "share": 12,
        "share_unit": "%",
        "note": "born on 5 May 1990",
        "flag": True,
    }


def test_normalise_extraction_renames_date_entities_consistently() -> None:
    extraction = ChunkExtraction(
        chunk_id="d#0#0",
        entities=[
            ExtractedEntity(name="  Real  Madrid ", type="Organization", aliases=["Real Madrid", "Los Blancos"]),
            ExtractedEntity(name="March 6, 1902", type="Date"),
            ExtractedEntity(name="$3.5 million", type="Number"),
        ],
        relations=[
            ExtractedRelation(
                subject="Real Madrid",
                predicate="founded  on",
                object="March 6, 1902",
                properties={"date": "6 March 1902"},
            ),
        ],
        events=[ExtractedEvent(name="Founding", roles={"time": "March 6, 1902", "org": "Real  Madrid"})],
    )
    result = normalise_extraction(extraction)
    real, date, money = result.entities
    assert real.name == "Real Madrid" and real.aliases == ["Los Blancos"]
    assert date.name == "1902-03-06" and date.aliases == ["March 6, 1902"]
    assert money.properties == {"value": 3_500_000, "unit": "USD"}
    relation = result.relations[0]
    assert (relation.subject, relation.predicate, relation.object) == ("Real Madrid", "founded on", "1902-03-06")
    assert relation.properties == {"date": "1902-03-06"}
    assert result.events[0].roles == {"time": "1902-03-06", "org": "Real Madrid"}
