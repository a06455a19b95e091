"""What the parser refuses, and how: only ScheduleSyntax, quoting the input and naming the field."""

from __future__ import annotations

import pytest

from cronplane.core.cron import parse
from cronplane.errors import CronplaneError, ScheduleSyntax

INVALID = [
    # (input, the field the error names)
    ("", "expression"),
    ("   \t ", "expression"),
    ("61 * * * *", "minute"),
    ("* 24 * * *", "hour"),
    ("* * 0 * *", "day-of-month"),
    ("* * 32 * *", "day-of-month"),
    ("* * * 0 *", "month"),
    ("* * * 13 *", "month"),
    ("* * * * 8", "day-of-week"),
    ("5-1 * * * *", "minute"),  # reversed range
    ("* * * * FRI-MON", "day-of-week"),
    ("* * * DEC-JAN *", "month"),
    ("*/0 * * * *", "minute"),
    ("*/61 * * * *", "minute"),
    ("1,,2 * * * *", "minute"),
    ("1- * * * *", "minute"),
    ("-1 * * * *", "minute"),
    ("1_0 * * * *", "minute"),  # int() would accept it
    ("0x1 * * * *", "minute"),
    ("١ * * * *", "minute"),  # ARABIC-INDIC DIGIT ONE: str.isdigit() is True
    ("𝟘 * * * *", "minute"),  # MATHEMATICAL DOUBLE-STRUCK DIGIT ZERO
    ("0 ² * * *", "hour"),
    ("? * * * *", "minute"),  # ? only in the day fields
    ("0 0 ?,1 * *", "day-of-month"),
    ("0 0 1 JANUARY *", "month"),
    ("0 0 * * L", "day-of-week"),
    ("0 0 * * 5#6", "day-of-week"),
    ("0 0 * * 5#0", "day-of-week"),
    ("0 0 * * 9L", "day-of-week"),
    ("0 0 32W * *", "day-of-month"),
    ("0 0 L/2 * *", "day-of-month"),
    ("0 0 5L * *", "day-of-month"),
    ("0 0 * * 15W", "day-of-week"),
    ("0 0 30 2 *", "day-of-month"),  # never fires
    ("0 0 31 4 *", "day-of-month"),
    ("0 0 31 2,4,6,9,11 *", "day-of-month"),
    ("0 0 30 2 */2", "day-of-month"),  # AND: still never
    ("0 0 * * * *", "expression"),  # six fields: seconds
    ("* * * *", "expression"),
    ("* * * * * * *", "expression"),
    ("hello", "expression"),
    ("every 0 minutes", "interval"),
    ("every 5 weeks", "expression"),
    ("every 3651 days", "interval"),
    ("at 24:00", "hour"),
    ("at 12:60", "minute"),
    ("at 1:5", "expression"),
    ("@every", "interval"),
    ("@every 0m", "interval"),
    ("@every 30x", "interval"),
    ("@every 5x", "interval"),
    ("@every 30m1h", "interval"),
    ("every minutes", "interval"),
    ("every 2 weeks", "expression"),
    ("every 0 seconds", "interval"),
    ("@every 0s", "interval"),
    ("@fortnightly", "expression"),
    ("@", "expression"),
    ("H * * * *", "minute"),  # no seed
    ("0 0 * * *\n0", "day-of-week"),
    ("x" * 257, "expression"),
    ("*" + " " * 300 + "* * * *", "expression"),
]


@pytest.mark.parametrize(("text", "field"), INVALID)
def test_rejected(text: str, field: str) -> None:
    with pytest.raises(ScheduleSyntax) as caught:
        parse(text)
    error = caught.value
    assert error.code.text == "X400003INVSCH"
    assert error.detail["field"] == field
    assert field in error.message
    if len(text) <= 60:
        assert repr(text) in error.message
        assert error.detail["expression"] == text


@pytest.mark.parametrize(
    ("text", "seed", "field"),
    [
        ("H(5-3) * * * *", "s", "minute"),
        ("H(1-70) * * * *", "s", "minute"),
        ("H/0 * * * *", "s", "minute"),
        ("H(1) * * * *", "s", "minute"),
        ("HH * * * *", "s", "minute"),
        ("0 H(0-30) * * *", "s", "hour"),
    ],
)
def test_rejected_hash_forms(text: str, seed: str, field: str) -> None:
    with pytest.raises(ScheduleSyntax) as caught:
        parse(text, seed=seed)
    assert caught.value.detail["field"] == field


def test_six_fields_point_to_every_n_seconds() -> None:
    with pytest.raises(
        ScheduleSyntax, match="a seconds field is not supported: write 'every N seconds'"
    ):
        parse("0 30 2 * * *")


def test_too_long_is_rejected_before_parsing() -> None:
    text = "0 0 * * *" + " " * 248  # valid once stripped, but 257 characters
    with pytest.raises(ScheduleSyntax, match="longer than 256"):
        parse(text)
    assert parse("0 0 * * *" + " " * 247).normalized == "0 0 * * *"  # 256 is fine


def test_the_error_is_a_value_error_and_a_coded_error() -> None:
    with pytest.raises(ValueError):
        parse("nope")
    with pytest.raises(CronplaneError) as caught:
        parse("nope")
    assert str(caught.value).startswith("X400003INVSCH: invalid schedule 'nope'")


def test_non_strings_are_rejected_with_the_same_error() -> None:
    with pytest.raises(ScheduleSyntax):
        parse(None)  # type: ignore[arg-type]
    with pytest.raises(ScheduleSyntax):
        parse("* * * * *", seed=5)  # type: ignore[arg-type]
