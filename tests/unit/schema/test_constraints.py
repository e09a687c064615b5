"""The schema's constraints as checked on write: one test per constraint kind and value type."""

from __future__ import annotations

from pathlib import Path

import pytest

from kag_neo4j.schema import load_schema
from kag_neo4j.schema.constraints import (
    STANDARD_TYPES,
    Where,
    check_properties,
    check_targets,
    check_value,
    missing_required,
    required,
)
from kag_neo4j.schema.models import Constraints, ResolvedProperty

SCHEMA = Path(__file__).resolve().parents[2] / "fixtures" / "constraints" / "Checked.schema"
HERE = Where(file="t.csv", row=2, chunk="t#1#0")


def _prop(value_type: str = "Text", **constraints: object) -> ResolvedProperty:
    return ResolvedProperty(name="p", value_type=value_type, constraints=Constraints(**constraints))


def _check(prop: ResolvedProperty, value: object):  # noqa: ANN202 - test helper
    return check_value(prop, value, type_name="T", where=HERE)


@pytest.mark.parametrize(("value", "written"), [(42, 42), ("42", 42), (" -7 ", -7), (3.0, 3)])
def test_integer_accepts_integers_and_numerals(value: object, written: int) -> None:
    checked = _check(_prop("Integer"), value)
    assert checked.ok and checked.value == written and type(checked.value) is int


@pytest.mark.parametrize("value", ["thirty", "4.5", 4.5, True, "", "1e3"])
def test_integer_refuses_the_rest(value: object) -> None:
    checked = _check(_prop("Integer"), value)
    assert checked.violation is not None and checked.violation.constraint == "ValueType"
    assert checked.violation.property == "p" and checked.violation.where == HERE


@pytest.mark.parametrize(("value", "written"), [(4.5, 4.5), ("4.5", 4.5), (3, 3.0), ("-1e3", -1000.0), (".5", 0.5)])
def test_float_accepts_numbers(value: object, written: float) -> None:
    checked = _check(_prop("Float"), value)
    assert checked.ok and checked.value == written and type(checked.value) is float


@pytest.mark.parametrize("value", ["high", float("nan"), float("inf"), False, "1,5"])
def test_float_refuses_the_rest(value: object) -> None:
    assert _check(_prop("Float"), value).violation is not None


@pytest.mark.parametrize("value", ["x", 7, 1.5, True])
def test_text_takes_any_scalar_unchanged(value: object) -> None:
    checked = _check(_prop("Text"), value)
    assert checked.ok and checked.value == value


def test_a_non_scalar_is_a_value_type_violation() -> None:
    assert _check(_prop("Text"), {"a": 1}).violation.constraint == "ValueType"  # type: ignore[union-attr]


@pytest.mark.parametrize(("std", "good", "written", "bad"), [
    ("ChinaMobile", "138 0013 8000", "13800138000", "12345678901"),
    ("ChinaMobile", 13900139000, "13900139000", "1380013800"),
    ("ChinaTelCode", "010-12345678", "01012345678", "12-34"),
    ("Email", "a.b@example.com", "a.b@example.com", "a.b@example"),
    ("IdCardNo", "11010519491231002x", "11010519491231002X", "110105194912310021"),
    ("MacAddress", "00:1A:2b:3C:4d:5E", "00:1A:2b:3C:4d:5E", "00:1A-2b:3C:4d:5E"),
    ("Date", "20230105", "2023-01-05", "20231345"),
    ("Date", "2023年1月5日", "2023-01-05", "2023-1-32"),
    ("ChinaMobile", "150****3237", "150****3237", "150****32"),
    ("Date", "2024-02-29", "2024-02-29", "2023-02-29"),
    ("Timestamp", "1700000000", "1700000000", "17000000"),
])
def test_standard_types(std: str, good: object, written: str, bad: str) -> None:
    prop = _prop(f"STD.{std}")
    checked = _check(prop, good)
    assert checked.ok and checked.value == written
    violation = _check(prop, bad).violation
    assert violation is not None and violation.constraint == "ValueType"
    assert violation.expected.startswith(f"STD.{std}: ")


def test_every_standard_type_has_a_description() -> None:
    assert all(standard.description for standard in STANDARD_TYPES.values())


def test_an_unknown_standard_type_is_text() -> None:
    assert _check(_prop("STD.Whatever"), "anything").value == "anything"


def test_enum_is_exact_on_the_text_form() -> None:
    prop = _prop(enum=("gold", "silver", "1"))
    assert _check(prop, "gold").ok and _check(prop, 1).ok and _check(prop, 1.0).ok
    for bad in ("Gold", "platinum", 2):
        violation = _check(prop, bad).violation
        assert violation is not None and violation.constraint == "Enum" and "gold, silver, 1" in violation.expected


def test_regular_is_a_full_match() -> None:
    prop = _prop(regular=r"C-\d{4}")
    assert _check(prop, "C-0001").ok
    for bad in ("C-00011", "xC-0001", "C-1"):
        assert _check(prop, bad).violation.constraint == "Regular"  # type: ignore[union-attr]
    assert _check(_prop("Integer", regular=r"\d{2}"), "42").ok  # held against the number's text form


def test_type_comes_before_enum_and_regular() -> None:
    violation = _check(_prop("Integer", enum=("1", "2")), "x").violation
    assert violation is not None and violation.constraint == "ValueType"


def test_a_list_needs_multi_value() -> None:
    violation = _check(_prop("Text"), ["a", "b"]).violation
    assert violation is not None and violation.constraint == "MultiValue"
    checked = _check(_prop("Integer", multi_value=True), ["1", 2])
    assert checked.ok and checked.value == [1, 2]
    bad = _check(_prop("Integer", multi_value=True, enum=("1",)), ["1", "2"]).violation
    assert bad is not None and bad.constraint == "Enum" and bad.value == "2"


def test_multi_target_cells_need_multi_value() -> None:
    assert check_targets("Customer", "owns", True, ["a2", "a3"], where=HERE) is None
    assert check_targets("Customer", "referredBy", False, ["c1"], where=HERE) is None
    violation = check_targets("Customer", "referredBy", False, ["c1", "c2"], where=HERE)
    assert violation is not None and violation.constraint == "MultiValue" and violation.value == "c1, c2"


def test_not_null() -> None:
    customer = load_schema(SCHEMA).get_type("Customer")
    assert required(customer) == ("tier",)
    assert missing_required("Customer", required(customer), {"name", "tier"}, where=HERE) == []
    (violation,) = missing_required("Customer", required(customer), {"name"}, where=HERE)
    assert (violation.constraint, violation.property, violation.value) == ("NotNull", "tier", None)


def test_check_properties_keeps_the_rest_of_the_record() -> None:
    customer = load_schema(SCHEMA).get_type("Customer")
    kept, violations = check_properties(customer, {"age": "thirty", "score": "4.5", "tier": "gold", "note": "x"},
                                        where=HERE)
    assert kept == {"score": 4.5, "tier": "gold", "note": "x"}
    assert [(v.type_name, v.property, v.constraint, v.value) for v in violations] == [
        ("Customer", "age", "ValueType", "thirty")]


def test_edge_properties_are_checked_against_the_relation() -> None:
    (transfer,) = [r for r in load_schema(SCHEMA).get_type("Account").relations if r.name == "transfer"]
    kept, violations = check_properties(transfer, {"amount": "12.5", "channel": "cash"}, where=HERE,
                                        type_name="Account.transfer")
    assert kept == {}
    assert {(v.property, v.constraint) for v in violations} == {("amount", "ValueType"), ("channel", "Enum")}


def test_the_message_names_place_property_value_and_constraint() -> None:
    violation = _check(_prop(enum=("a",)), "b").violation
    assert violation is not None
    assert violation.message == "t.csv row 2: T.p = 'b' breaks Enum (one of a); value not written"
    assert violation.model_dump(mode="json")["message"] == violation.message
    assert str(Where(chunk="d#0#0")) == "chunk d#0#0"
    assert str(Where(rule="R1", node="Company:x")) == "rule R1, node Company:x"


def test_long_values_are_cut_in_reports() -> None:
    violation = _check(_prop(regular="x"), "y" * 500).violation
    assert violation is not None and violation.value is not None and len(violation.value) == 80
