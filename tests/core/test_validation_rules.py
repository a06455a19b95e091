"""Input limits (SPEC §10) as pure checks."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cronplane.core import target_rules, validation
from cronplane.core.fields import FIELD_CHECKS
from cronplane.core.occurrences import first_run
from cronplane.errors import (
    CronRejected,
    InvalidName,
    InvalidPayload,
    InvalidRequest,
    InvalidTarget,
    UnknownZone,
)


@pytest.mark.parametrize("name", ["a", "A.b_c-9", "x" * 64])
def test_good_names(name: str) -> None:
    assert validation.validate_name(name) == name


@pytest.mark.parametrize("name", ["", "x" * 65, "a b", "é", "a/b", None, 5])
def test_bad_names(name: object) -> None:
    with pytest.raises(InvalidName):
        validation.validate_name(name)


def test_payload_limits() -> None:
    assert validation.validate_payload({"a": [1, {"b": None}]}) == {"a": [1, {"b": None}]}
    at_limit: dict[str, object] = {}
    node = at_limit
    for _ in range(31):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    assert validation.payload_depth(at_limit) == 32
    validation.validate_payload(at_limit)
    node["a"] = {}
    with pytest.raises(InvalidPayload, match="deeper"):
        validation.validate_payload(at_limit)
    exact = {"k": "x" * (64 * 1024 - len('{"k":""}'))}
    validation.validate_payload(exact)
    with pytest.raises(InvalidPayload, match="limit"):
        validation.validate_payload({"k": exact["k"] + "x"})
    for bad in ([], "x", 1, None, {"f": float("nan")}, {"s": {1, 2}}):
        with pytest.raises(InvalidPayload):
            validation.validate_payload(bad)


def test_schema_checks() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    validation.validate_against_schema({"n": 2}, schema)
    with pytest.raises(InvalidPayload, match="n: 0 is less than"):
        validation.validate_against_schema({"n": 0}, schema)
    with pytest.raises(InvalidRequest):
        validation.validate_schema({"type": "nonsense"})


def test_cron_zone_and_horizon() -> None:
    assert validation.normalize_cron("every 15 minutes", "seed") == "*/15 * * * *"
    with pytest.raises(CronRejected, match="'every day at noon'"):
        validation.normalize_cron("every day at noon", "seed")
    with pytest.raises(CronRejected):
        validation.normalize_cron("* " * 200, "seed")
    with pytest.raises(UnknownZone):
        validation.validate_zone("Not/AZone")
    assert validation.validate_zone("America/New_York") == "America/New_York"
    now = datetime(2096, 3, 1, tzinfo=UTC)
    with pytest.raises(CronRejected, match="five years"):
        first_run("0 0 29 2 *", "UTC", now)


@pytest.mark.parametrize(
    "target",
    ["python:billing.jobs:send", "webhook:https://x.example/hook?a=1", "celery:billing.tasks.send"],
)
def test_good_targets(target: str) -> None:
    assert target_rules.validate_target(target) == target.split(":")[0]


@pytest.mark.parametrize(
    "target",
    ["", "python:billing", "python:1x:f", "webhook:ftp://x", "webhook:nohost", "smtp:x", 3],
)
def test_bad_targets(target: object) -> None:
    with pytest.raises(InvalidTarget):
        target_rules.validate_target(target)


def test_misfire_grace_and_overlap() -> None:
    grace = FIELD_CHECKS["misfire_grace"]
    assert grace(None, "") is None
    assert grace(0, "") == 0
    for bad in (-1, 10**9, True, 1.5, "60"):
        with pytest.raises(InvalidRequest):
            grace(bad, "")
    assert validation.validate_overlap("allow") == "allow"
    with pytest.raises(InvalidRequest):
        validation.validate_overlap("never")
