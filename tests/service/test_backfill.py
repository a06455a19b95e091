"""Backfill a range (docs/controls.md) through the service, on both databases: exactly
once per occurrence, in order, the overlap rule, the cap, dry runs; and a property test."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.controls import MAX_BACKFILL
from cronplane.core.firing import Outcome
from cronplane.core.inputs import ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import BackfillOverlap, BackfillTooLarge, InvalidBackfill
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store import limits, queue
from cronplane.store.database import Database
from service_support import START

SCOPE = Scope("acme", "billing", "prod")
DAY = datetime(2026, 1, 5, tzinfo=UTC)


def hourly(service: ScheduleService, overlap: str = "skip", **fields: object) -> None:
    spec = ScheduleSpec(job="report", cron="0 * * * *", name="hourly", overlap=overlap, **fields)  # type: ignore[arg-type]
    service.create_schedule(SCOPE, spec, actor="t")


def backfill_items(service: ScheduleService) -> list[queue.QueueItem]:
    return [item for item in service.list_items("acme", limit=1000) if item.source == "backfill"]


def test_backfill_enqueues_each_occurrence_once_in_order(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    hourly(service)
    report = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T06:00Z", end="2026-01-05T09:00Z"
    )
    expected = tuple(DAY + timedelta(hours=h) for h in (6, 7, 8))
    assert report.occurrences == report.enqueued == expected and report.already_fired == ()
    items = backfill_items(service)
    assert sorted(item.scheduled_for for item in items) == list(expected)  # type: ignore[type-var]
    # Without allow_overlap they run one by one, in occurrence order: a worker's
    # claim (however large its batch) starts the next only once the last is done.
    assert all(item.exclusive for item in items)
    clock.advance(1)
    started = []
    for _ in expected:
        with database.begin() as conn:
            (claimed,) = limits.claim(conn, "w", clock.now(), timedelta(minutes=1), 10)
            assert limits.claim(conn, "w2", clock.now(), timedelta(minutes=1), 10) == []
        started.append(claimed.scheduled_for)
        with database.begin() as conn:
            assert queue.succeed(conn, claimed.id, "w", clock.now(), None)
    assert started == list(expected)
    # Again, overlapping the first range: those occurrences are reported, not enqueued.
    again = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T08:00Z", end="2026-01-05T10:00Z",
        allow_overlap=True,
    )  # fmt: skip
    assert again.already_fired == (DAY + timedelta(hours=8),)
    assert again.enqueued == (DAY + timedelta(hours=9),)
    assert len(backfill_items(service)) == 4
    (event, *_) = [
        e for e in service.schedule_history(SCOPE, "hourly") if e.code == ev.BACKFILL_ENQUEUED.text
    ]
    assert event.actor == "ops" and event.detail["enqueued"] == 1
    assert event.detail["already_fired"] == 1


def test_an_occurrence_the_dispatcher_fired_is_already_fired(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    hourly(service, overlap="allow")
    clock.set(datetime(2026, 1, 5, 13, 0, 1, tzinfo=UTC))
    assert Dispatcher(database, clock, holder="a").tick().fired == 1
    clock.advance(3600)
    report = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T12:00Z", end="2026-01-05T14:00Z",
        allow_overlap=True,
    )  # fmt: skip
    assert report.already_fired == (DAY + timedelta(hours=13),)
    assert report.enqueued == (DAY + timedelta(hours=12),)
    # 14:00 is due but not fired yet: the dispatcher's, never backfill's.
    late = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T14:00Z", end="2026-01-05T14:00:01Z",
        allow_overlap=True,
    )  # fmt: skip
    assert late.left_to_dispatcher == (DAY + timedelta(hours=14),) and late.enqueued == ()
    assert Dispatcher(database, clock, holder="a").tick().fired == 1


def test_dry_run_lists_and_writes_nothing(service: ScheduleService) -> None:
    hourly(service)
    report = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T00:00", end="2026-01-05T03:00",
        dry_run=True,
    )  # fmt: skip
    assert report.dry_run and len(report.enqueued) == 3 and report.item_ids == ()
    assert backfill_items(service) == []
    assert ev.BACKFILL_ENQUEUED.text not in {
        e.code for e in service.schedule_history(SCOPE, "hourly")
    }


def test_overlap_skip_refuses_while_an_item_is_active(service: ScheduleService) -> None:
    hourly(service)
    service.run_now(SCOPE, "hourly", actor="ops")
    with pytest.raises(BackfillOverlap) as raised:
        service.backfill_schedule(
            SCOPE, "hourly", actor="ops", start="2026-01-05T00:00Z", end="2026-01-05T02:00Z"
        )
    assert raised.value.code.text == "X409105BKFACT"
    assert backfill_items(service) == []
    allowed = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T00:00Z", end="2026-01-05T02:00Z",
        allow_overlap=True,
    )  # fmt: skip
    assert len(allowed.enqueued) == 2


def test_live_fires_skip_while_backfill_items_are_queued(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    hourly(service)
    service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T00:00Z", end="2026-01-05T02:00Z"
    )
    clock.set(datetime(2026, 1, 5, 13, 0, 1, tzinfo=UTC))
    report = Dispatcher(database, clock, holder="a").tick()
    assert report.fired == 0 and report.counts[Outcome.SKIPPED_OVERLAP] == 1


@pytest.mark.parametrize(
    ("start", "end", "error", "code"),
    [
        ("2026-01-05T03:00Z", "2026-01-05T03:00Z", InvalidBackfill, "X400103BKFRNG"),
        ("2026-01-05T04:00Z", "2026-01-05T03:00Z", InvalidBackfill, "X400103BKFRNG"),
        ("yesterday", "2026-01-05T03:00Z", InvalidBackfill, "X400103BKFRNG"),
        ("2026-01-05T00:00Z", "2026-01-06T00:00Z", InvalidBackfill, "X400103BKFRNG"),  # future
        ("2025-01-01T00:00Z", "2026-01-05T00:00Z", BackfillTooLarge, "X400104BKFCAP"),
    ],
)
def test_bad_ranges_are_coded_and_write_nothing(
    service: ScheduleService, start: str, end: str, error: type[Exception], code: str
) -> None:
    hourly(service)
    with pytest.raises(error) as raised:
        service.backfill_schedule(SCOPE, "hourly", actor="ops", start=start, end=end)
    assert raised.value.code.text == code  # type: ignore[attr-defined]
    assert backfill_items(service) == []


def test_the_cap_is_inclusive(service: ScheduleService) -> None:
    hourly(service)
    end = START.replace(minute=0, second=0)
    start = end - timedelta(hours=MAX_BACKFILL)
    report = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start=start.isoformat(), end=end.isoformat(), dry_run=True
    )
    assert len(report.occurrences) == MAX_BACKFILL


def test_jittered_rows_backfill_nominal_occurrences(service: ScheduleService) -> None:
    hourly(service, jitter=600)
    report = service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T01:00Z", end="2026-01-05T03:00Z"
    )
    assert report.enqueued == (DAY + timedelta(hours=1), DAY + timedelta(hours=2))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    ranges=st.lists(
        st.tuples(st.integers(0, 11 * 60), st.integers(1, 6 * 60)), min_size=1, max_size=4
    )
)
def test_backfill_never_enqueues_an_occurrence_twice_and_covers_each_range(
    database: Database, ranges: list[tuple[int, int]]
) -> None:
    """Any sequence of ranges: every occurrence in their union has exactly one item, and
    each report's occurrences are exactly the cron's in [from, to)."""
    from cronplane.core.inputs import JobSpec
    from cronplane.store.tables import metadata

    with database.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())
    service = ScheduleService(database, FakeClock(DAY + timedelta(days=1)))
    service.register_job("acme", "billing", JobSpec(name="report", target="python:x:y"), actor="t")
    spec = ScheduleSpec(job="report", cron="*/20 * * * *", name="hourly", overlap="allow")
    service.create_schedule(SCOPE, spec, actor="t")
    covered: set[datetime] = set()
    for offset, length in ranges:
        start = DAY + timedelta(minutes=offset)
        end = start + timedelta(minutes=length)
        report = service.backfill_schedule(
            SCOPE, "hourly", actor="p", start=start.isoformat(), end=end.isoformat()
        )
        expected = [
            DAY + timedelta(minutes=m)
            for m in range(0, 24 * 60, 20)
            if start <= DAY + timedelta(minutes=m) < end
        ]
        assert list(report.occurrences) == expected
        assert set(report.enqueued) == set(expected) - covered
        assert set(report.already_fired) == set(expected) & covered
        covered |= set(expected)
    fired = [item.scheduled_for for item in backfill_items(service)]
    assert len(fired) == len(set(fired)) and set(fired) == covered


def test_backfill_allowed_to_overlap_runs_side_by_side(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    hourly(service, overlap="allow")
    service.backfill_schedule(
        SCOPE, "hourly", actor="ops", start="2026-01-05T06:00Z", end="2026-01-05T09:00Z",
        allow_overlap=True,
    )  # fmt: skip
    assert not any(item.exclusive for item in backfill_items(service))
    clock.advance(1)
    with database.begin() as conn:
        claimed = limits.claim(conn, "w", clock.now(), timedelta(minutes=1), 10)
    assert [item.scheduled_for for item in claimed] == [DAY + timedelta(hours=h) for h in (6, 7, 8)]
