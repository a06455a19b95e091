"""Cron and zone messages that help (issue 14): a suggestion, said once, a way out."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import available_timezones

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.core.cron import known_zone, parse
from cronplane.core.explain import explain
from cronplane.core.validation import normalize_cron, validate_zone
from cronplane.errors import CronRejected, ScheduleSyntax, UnknownZone

NAMES = sorted(available_timezones() - {"localtime", "posixrules"})


@pytest.mark.parametrize(
    ("name", "suggested"),
    [
        ("europe/berlin", ["Europe/Berlin"]),
        ("EUROPE/LONDON", ["Europe/London"]),
        ("utc", ["UTC"]),
        ("berlin", ["Europe/Berlin"]),
        ("new york", ["America/New_York"]),
        ("Europe/Berln", ["Europe/Berlin"]),
    ],
)
def test_an_unknown_zone_suggests_the_closest_names(name: str, suggested: list[str]) -> None:
    with pytest.raises(UnknownZone) as caught:
        known_zone(name)
    error = caught.value
    assert error.detail["suggestions"][: len(suggested)] == suggested
    assert f"did you mean {suggested[0]}" in error.message
    assert error.message.count(repr(name)) == 1


def test_the_case_insensitive_match_is_the_only_suggestion() -> None:
    with pytest.raises(UnknownZone) as caught:
        known_zone("europe/berlin")
    assert caught.value.message == "unknown time zone 'europe/berlin': did you mean Europe/Berlin?"
    assert caught.value.detail == {"timezone": "europe/berlin", "suggestions": ["Europe/Berlin"]}


def test_nothing_close_says_what_a_zone_name_looks_like() -> None:
    with pytest.raises(UnknownZone) as caught:
        known_zone("Mars/Olympus_Mons_Base")
    assert caught.value.detail["suggestions"] == []
    assert "not an IANA zone name (e.g. Europe/London)" in caught.value.message


def test_validate_zone_suggests_too() -> None:
    with pytest.raises(UnknownZone, match="did you mean Asia/Tokyo"):
        validate_zone("asia/tokyo")


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(NAMES), st.sampled_from([str.lower, str.upper, str.swapcase]))
def test_any_zone_in_another_case_suggests_itself_first(name: str, case: object) -> None:
    changed = case(name)  # type: ignore[operator]
    if changed == name:
        return
    with pytest.raises(UnknownZone) as caught:
        known_zone(changed)
    assert caught.value.detail["suggestions"] == [name]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_any_text_is_a_zone_or_unknown_zone(name: str) -> None:
    try:
        known_zone(name)
    except UnknownZone as error:
        assert all(s in NAMES for s in error.detail["suggestions"])
        assert len(error.detail["suggestions"]) <= 3


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("61 * * * *", "minute: '61': 61 is out of range 0-59"),
        ("every 0 minutes", "interval: N must be at least 1"),
        ("hello", "expression: "),
    ],
)
def test_the_service_error_says_it_once(text: str, reason: str) -> None:
    with pytest.raises(CronRejected) as caught:
        normalize_cron(text, "seed")
    message = caught.value.message
    assert message.startswith(f"cron {text!r} rejected: {reason}")
    assert message.count(repr(text)) == 1
    assert "invalid schedule" not in message
    with pytest.raises(CronRejected) as explained:
        explain(text, "UTC", datetime(2026, 1, 1, tzinfo=UTC), 1)
    assert explained.value.message == message


@pytest.mark.parametrize("text", ["every minutes", "every hours", "every days", "Every Minutes"])
def test_a_plural_unit_without_a_number_is_refused(text: str) -> None:
    with pytest.raises(ScheduleSyntax) as caught:
        parse(text)
    assert caught.value.detail["field"] == "interval"
    assert "how many" in caught.value.message


def test_a_singular_unit_without_a_number_is_still_one() -> None:
    assert parse("every minute").normalized == "*/1 * * * *"
    assert parse("every hour").normalized == "0 */1 * * *"
    assert parse("every day").normalized == "0 0 * * *"


@pytest.mark.parametrize(
    ("text", "advice"),
    [
        ("every 2 weeks", ["every 14 days", "0 0 * * 0"]),
        ("every week", ["@weekly", "every 7 days"]),
        ("every 1 week", ["@weekly", "every 7 days"]),
        ("every 3 weeks", ["every 21 days"]),
        ("every month", ["@monthly", "0 0 1 * *"]),
        ("every 2 months", ["0 0 1 */2 *"]),
        ("every year", ["@yearly"]),
    ],
)
def test_weeks_and_months_say_what_to_write(text: str, advice: list[str]) -> None:
    with pytest.raises(ScheduleSyntax) as caught:
        parse(text)
    for words in advice:
        assert words in caught.value.message
    for words in advice:
        parse(words)  # the advice itself is accepted


@pytest.mark.parametrize(
    ("text", "advice"),
    [
        ("0 30 2 * * *", "for this one: '30 2 * * *'"),
        ("15 30 2 * * *", "every N seconds"),
        ("*/10 * * * * *", "every 10 seconds"),
        ("* * * * * *", "every 1 second"),
        ("*/7 * * * * *", "every N seconds"),
    ],
)
def test_six_fields_point_to_every_n_seconds(text: str, advice: str) -> None:
    with pytest.raises(ScheduleSyntax) as caught:
        parse(text)
    assert caught.value.detail["field"] == "expression"
    assert advice in caught.value.message
    assert "5 fields" in caught.value.message
