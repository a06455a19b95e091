"""Jitter (docs/controls.md): a stable offset per schedule, nominal scheduled_for, the
fires spread over the window; through the service and a real dispatcher, both databases."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.controls import jitter_offset
from cronplane.core.inputs import CronDeclaration, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import InvalidJitter, InvalidManifest, JitterTooLong
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import NewSchedule, ScheduleService
from cronplane.store.database import Database
from cronplane.store.tables import queue_items, schedules

SCOPE = Scope("acme", "billing", "prod")
MIDNIGHT = datetime(2026, 1, 6, 0, 0, tzinfo=UTC)


def test_a_jittered_row_fires_at_nominal_plus_its_offset_and_records_both(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    spec = ScheduleSpec(job="report", cron="0 0 * * *", name="nightly", jitter=300)
    row = service.create_schedule(SCOPE, spec, actor="t")
    offset = jitter_offset(row.id, 300)
    assert row.jitter == 300 and row.jitter_offset == offset and 0 <= offset < 300
    assert row.next_run == MIDNIGHT + timedelta(seconds=offset)
    dispatcher = Dispatcher(database, clock, holder="a")
    clock.set(MIDNIGHT + timedelta(seconds=offset) - timedelta(milliseconds=1))
    assert dispatcher.tick().fired == 0  # not yet: the row is due at its fire instant
    clock.set(MIDNIGHT + timedelta(seconds=offset))
    assert dispatcher.tick().fired == 1
    (item,) = service.list_items("acme")
    assert item.scheduled_for == MIDNIGHT and item.created_at == clock.now()
    (fired,) = [
        e for e in service.schedule_history(SCOPE, "nightly") if e.code == ev.SCHEDULE_FIRED.text
    ]
    assert fired.scheduled_for == MIDNIGHT and fired.detail["jitter_offset"] == offset
    # The next night keeps the same place in its window.
    after = service.get_schedule(SCOPE, "nightly")
    assert after.next_run == MIDNIGHT + timedelta(days=1, seconds=offset)


def test_the_offset_survives_a_takeover(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    spec = ScheduleSpec(job="report", cron="*/10 * * * *", name="ten", jitter=120, overlap="allow")
    row = service.create_schedule(SCOPE, spec, actor="t")
    nominal = row.next_run - timedelta(seconds=row.jitter_offset)
    for n in range(3):
        clock.set(nominal + timedelta(minutes=10 * n, seconds=row.jitter_offset))
        # A new leader every occurrence (the previous lease expired): same instant.
        assert Dispatcher(database, clock, holder=f"n{n}", ttl=5).tick().fired == 1
    items = sorted(service.list_items("acme"), key=lambda item: item.created_at)
    assert [item.scheduled_for for item in items] == [
        nominal + timedelta(minutes=10 * n) for n in range(3)
    ]
    assert [item.created_at - item.scheduled_for for item in items] == [
        timedelta(seconds=row.jitter_offset)
    ] * 3


@pytest.mark.parametrize(
    ("cron", "jitter", "error", "code"),
    [
        ("0 0 * * *", 86_400, JitterTooLong, "X400101JITLNG"),  # as long as the daily gap
        ("*/5 * * * *", 300, JitterTooLong, "X400101JITLNG"),
        ("0 * * * *", 3_600, JitterTooLong, "X400101JITLNG"),
        ("0 0 * * *", -1, InvalidJitter, "X400100JITINV"),
        ("0 0 * * *", 86_401, InvalidJitter, "X400100JITINV"),
    ],
)
def test_bad_jitter_is_coded_and_writes_nothing(
    service: ScheduleService, cron: str, jitter: int, error: type[Exception], code: str
) -> None:
    with pytest.raises(error) as raised:
        service.create_schedule(
            SCOPE, ScheduleSpec(job="report", cron=cron, jitter=jitter), actor="t"
        )
    assert raised.value.code.text == code  # type: ignore[attr-defined]
    assert service.list_schedules("acme").items == ()


def test_update_recomputes_next_run_and_checks_against_the_cron(
    service: ScheduleService, clock: FakeClock
) -> None:
    row = service.create_schedule(
        SCOPE, ScheduleSpec(job="report", cron="0 0 * * *", name="n"), actor="t"
    )
    assert row.jitter_offset == 0 and row.next_run == MIDNIGHT
    jittered = service.update_schedule(SCOPE, "n", SchedulePatch(jitter=600), actor="t")
    assert jittered.jitter_offset == jitter_offset(row.id, 600)
    assert jittered.next_run == MIDNIGHT + timedelta(seconds=jittered.jitter_offset)
    # A cron whose gap the jitter no longer fits is refused, and nothing changes.
    with pytest.raises(JitterTooLong):
        service.update_schedule(SCOPE, "n", SchedulePatch(cron="*/5 * * * *"), actor="t")
    assert service.get_schedule(SCOPE, "n") == jittered
    cleared = service.update_schedule(SCOPE, "n", SchedulePatch(jitter=None), actor="t")
    assert cleared.jitter is None and cleared.jitter_offset == 0 and cleared.next_run == MIDNIGHT


def test_manifest_declares_jitter_and_an_operator_change_is_an_override(
    service: ScheduleService,
) -> None:
    app = Scope("acme", "billing", "default")
    service.sync(app, {"report": CronDeclaration(cron="0 0 * * *", jitter=300)}, actor="deploy")
    row = service.get_schedule(app, "report")
    assert row.jitter == 300 and row.next_run == MIDNIGHT + timedelta(seconds=row.jitter_offset)
    changed = service.update_schedule(app, "report", SchedulePatch(jitter=60), actor="ops")
    assert changed.overrides == ("jitter",)
    service.sync(app, {"report": CronDeclaration(cron="0 0 * * *", jitter=300)}, actor="deploy")
    assert service.get_schedule(app, "report").jitter == 60  # the override stands
    with pytest.raises(InvalidManifest) as raised:
        service.sync(
            app, {"other": CronDeclaration(cron="* * * * *", job="report", jitter=60)}, actor="d"
        )
    assert "crons.other.jitter: X400101JITLNG" in str(raised.value.detail)


def test_ten_thousand_midnight_schedules_spread_over_the_window(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    """10,000 rows "0 0 * * *" with jitter 300: fires spread over [00:00, 00:05)."""
    count, jitter, step = 10_000, 300, 10
    requests = [
        NewSchedule(
            SCOPE, ScheduleSpec(job="report", cron="0 0 * * *", name=f"s{n}", jitter=jitter), "t"
        )
        for n in range(count)
    ]
    for start in range(0, count, 2_000):
        assert all(
            not isinstance(r, Exception)
            for r in service.create_schedules(requests[start : start + 2_000])
        )
    dispatcher = Dispatcher(database, clock, holder="a", batch_size=5_000)
    for tick in range(jitter // step + 1):
        clock.set(MIDNIGHT + timedelta(seconds=tick * step))
        dispatcher.tick()
    with database.read() as conn:
        fired = conn.execute(
            select(
                queue_items.c.scheduled_for, queue_items.c.created_at, schedules.c.jitter_offset
            ).join(schedules, schedules.c.id == queue_items.c.schedule_id)
        ).all()
    assert len(fired) == count and {at for at, _, _ in fired} == {MIDNIGHT}
    # Each row fired at the first tick at or after its own fire instant.
    assert all(
        timedelta(0) <= created - (MIDNIGHT + timedelta(seconds=offset)) < timedelta(seconds=step)
        for _, created, offset in fired
    )
    offsets = [offset for _, _, offset in fired]
    assert min(offsets) >= 0 and max(offsets) < jitter
    # Ten 30-second buckets, 1,000 expected in each: chi-square with 9 degrees of
    # freedom stays under 27.9 (p = 0.001) for a uniform spread.
    buckets = Counter(offset // 30 for offset in offsets)
    chi_square = sum((buckets[b] - count / 10) ** 2 / (count / 10) for b in range(10))
    assert chi_square < 27.9, buckets
    # The rows kept their offsets for the next night.
    rows = service.list_schedules(
        "acme", ScheduleQuery(stack="billing", environment="prod", limit=1000)
    ).items
    assert all(
        row.next_run == MIDNIGHT + timedelta(days=1, seconds=row.jitter_offset) for row in rows
    )


def test_enable_and_record_run_keep_the_offset(service: ScheduleService, clock: FakeClock) -> None:
    spec = ScheduleSpec(job="report", cron="0 0 * * *", name="n", jitter=900)
    row = service.create_schedule(SCOPE, spec, actor="t")
    service.disable_schedule(SCOPE, "n", actor="t")
    enabled = service.enable_schedule(SCOPE, "n", actor="t")
    assert enabled.jitter_offset == row.jitter_offset and enabled.next_run == row.next_run
    ran = service.record_run(SCOPE, "n", actor="t", at=clock.now() + timedelta(days=1))
    assert ran.next_run == MIDNIGHT + timedelta(days=1, seconds=row.jitter_offset)
