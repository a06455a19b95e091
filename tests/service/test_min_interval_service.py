"""The installation's minimum interval (CRONPLANE_MIN_INTERVAL, issue 16): a create, an
update or a sync that sets a cron firing more often is refused with X400010INTMIN naming
the minimum, and writes nothing; rows already stored are left as they are."""

from __future__ import annotations

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import IntervalTooShort, InvalidManifest, InvalidRequest
from cronplane.service import ScheduleService
from cronplane.settings import load_settings
from cronplane.store.database import Database
from service_support import counts, snapshot

PROD = Scope("acme", "billing", "production")


def _strict(service: ScheduleService, database: Database, clock: FakeClock) -> ScheduleService:
    """A second service over the same database whose installation forbids < 10 s."""
    return ScheduleService(database, clock, min_interval=10)


def test_create_below_the_minimum_is_refused_and_writes_nothing(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    strict = _strict(service, database, clock)
    before = snapshot(database), counts(database)
    with pytest.raises(IntervalTooShort) as caught:
        strict.create_schedule(
            PROD, ScheduleSpec(job="report", cron="every 5 seconds"), actor="test"
        )
    assert caught.value.code.text == "X400010INTMIN"
    assert "10 seconds" in caught.value.message and caught.value.detail["minimum"] == 10
    assert (snapshot(database), counts(database)) == before
    # At the minimum, and any 5-field cron, passes.
    at = strict.create_schedule(
        PROD, ScheduleSpec(job="report", cron="every 10 seconds", name="ten"), actor="test"
    )
    assert at.cron == "@every 10s"
    strict.create_schedule(PROD, ScheduleSpec(job="report", cron="* * * * *"), actor="test")


def test_the_default_minimum_allows_one_second(service: ScheduleService) -> None:
    row = service.create_schedule(
        PROD, ScheduleSpec(job="report", cron="every 1 second"), actor="test"
    )
    assert row.cron == "@every 1s"


def test_update_below_the_minimum_is_refused_and_existing_rows_stay(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    # Made under the default minimum; then the operator raises it to 10 s.
    service.create_schedule(PROD, ScheduleSpec(job="report", cron="every 2 seconds"), actor="t")
    strict = _strict(service, database, clock)
    before = snapshot(database), counts(database)
    with pytest.raises(IntervalTooShort, match="minimum interval on this installation is 10"):
        strict.update_schedule(PROD, "report", SchedulePatch(cron="every 3 seconds"), actor="t")
    assert (snapshot(database), counts(database)) == before
    # The old row still stands and may change in other ways.
    edited = strict.update_schedule(PROD, "report", SchedulePatch(overlap="allow"), actor="t")
    assert edited.cron == "@every 2s" and edited.overlap == "allow"
    assert (
        strict.update_schedule(
            PROD, "report", SchedulePatch(cron="every 30 seconds"), actor="t"
        ).cron
        == "@every 30s"
    )


def test_sync_below_the_minimum_is_refused_but_an_unchanged_row_is_kept(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    fast = {"report": CronDeclaration(cron="every 5 seconds")}
    service.sync(PROD, fast, actor="deploy")  # allowed under the default minimum
    strict = _strict(service, database, clock)
    # Re-syncing the same manifest writes nothing and is not refused: the row predates the rule.
    assert not strict.sync(PROD, fast, actor="deploy").writes
    before = snapshot(database), counts(database)
    faster = {
        "report": CronDeclaration(cron="every 3 seconds"),
        "flush": CronDeclaration(cron="every 1 second", job="report"),
    }
    for dry_run in (True, False):
        with pytest.raises(InvalidManifest) as caught:
            strict.sync(PROD, faster, actor="deploy", dry_run=dry_run)
        problems = caught.value.detail["problems"]
        assert len(problems) == 2 and all("X400010INTMIN" in p for p in problems)
        assert all("minimum interval on this installation is 10 seconds" in p for p in problems)
        assert (snapshot(database), counts(database)) == before
    plan = strict.sync(PROD, {"report": CronDeclaration(cron="every 10 seconds")}, actor="d")
    assert [item.name for item in plan.updated] == ["report"]


@pytest.mark.parametrize(
    ("value", "expected"), [(None, 1), ("", 1), ("10", 10), (" 60 ", 60), ("1", 1)]
)
def test_the_setting_is_read_from_the_environment(value: str | None, expected: int) -> None:
    environ = {} if value is None else {"CRONPLANE_MIN_INTERVAL": value}
    assert load_settings(environ=environ).min_interval == expected


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "ten", "٣"])
def test_a_bad_setting_is_a_coded_error(value: str) -> None:
    with pytest.raises(InvalidRequest, match="CRONPLANE_MIN_INTERVAL"):
        load_settings(environ={"CRONPLANE_MIN_INTERVAL": value})
