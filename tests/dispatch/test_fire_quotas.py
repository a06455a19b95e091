"""Fire-time tenant quotas (issue 18), through the service and Dispatcher.tick() with a fake
clock, on SQLite and PostgreSQL: past max_fires_per_minute or max_queued, a tenant's
occurrences are SKIPPED_QUOTA with a ledger event naming the limit and its value; the next
minute brings a fresh budget; another tenant fires as usual."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.core.firing import Outcome
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.quotas import Quota
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from firing_support import items, ledger

START = datetime(2026, 3, 2, 10, 0, 30, tzinfo=UTC)
MINUTE = START.replace(second=0) + timedelta(minutes=1)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def service(database: Database, clock: FakeClock) -> ScheduleService:
    svc = ScheduleService(database, clock)
    for tenant in ("acme", "globex"):
        spec = JobSpec(name="job", target="python:h:ok")
        svc.register_job(tenant, "default", spec, actor="t")
    return svc


def _rows(service: ScheduleService, tenant: str, count: int) -> None:
    for n in range(count):
        spec = ScheduleSpec(job="job", cron="* * * * *", name=f"s{n}", overlap="allow")
        service.create_schedule(Scope(tenant), spec, actor="t")


def _codes(database: Database, tenant: str, at: datetime) -> Counter[str]:
    return Counter(e.code for e in ledger(database) if e.tenant == tenant and e.scheduled_for == at)


@pytest.mark.parametrize("batch_size", [1000, 3])
def test_fires_per_minute_fires_the_budget_and_skips_the_rest_each_minute(
    database: Database, clock: FakeClock, service: ScheduleService, batch_size: int
) -> None:
    _rows(service, "acme", 10)
    _rows(service, "globex", 3)
    service.set_quota("acme", {"max_fires_per_minute": 4}, actor="admin")
    dispatcher = Dispatcher(database, clock, holder="a", ttl=10, batch_size=batch_size)
    for minute in range(2):
        at = MINUTE + timedelta(minutes=minute)
        clock.set(at + timedelta(seconds=1))
        report = dispatcher.tick()
        assert report.counts[Outcome.FIRE] == 4 + 3
        assert report.counts[Outcome.SKIPPED_QUOTA] == 6
        assert _codes(database, "acme", at) == {"V200610SCHTRG": 4, "V200400SKPQTA": 6}
        assert _codes(database, "globex", at) == {"V200610SCHTRG": 3}
    skipped = [e for e in ledger(database) if e.code == ev.SKIPPED_QUOTA.text]
    assert {(e.detail["limit"], e.detail["value"]) for e in skipped} == {
        ("max_fires_per_minute", 4)
    }
    assert skipped[0].message == "skipped: tenant quota max_fires_per_minute (4) used"
    assert all(e.item_id is None for e in skipped)
    # A skipped row moved on like any skip: not a run, next_run the following minute.
    rows = service.list_schedules("acme").items
    assert sum(row.run_count for row in rows) == 8
    assert {row.next_run for row in rows} == {MINUTE + timedelta(minutes=2)}
    assert len(items(database)) == 8 + 6


def test_max_queued_stops_fires_while_the_queue_is_full(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    _rows(service, "acme", 8)
    service.set_quota("acme", {"max_queued": 5}, actor="admin")
    dispatcher = Dispatcher(database, clock, holder="a", ttl=10)
    clock.set(MINUTE)
    assert dispatcher.tick().counts[Outcome.FIRE] == 5
    clock.set(MINUTE + timedelta(minutes=1))
    report = dispatcher.tick()  # nothing ran: the queue is still full
    assert report.counts[Outcome.FIRE] == 0 and report.counts[Outcome.SKIPPED_QUOTA] == 8
    last = [e for e in ledger(database) if e.scheduled_for == clock.now()]
    assert {(e.detail["limit"], e.detail["value"]) for e in last} == {("max_queued", 5)}


def test_platform_default_applies_to_every_tenant_and_a_row_overrides_it(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    _rows(service, "acme", 5)
    _rows(service, "globex", 5)
    service.set_quota("globex", {"max_fires_per_minute": 3}, actor="admin")
    dispatcher = Dispatcher(
        database, clock, holder="a", ttl=10, quotas=Quota(max_fires_per_minute=2)
    )
    clock.set(MINUTE)
    dispatcher.tick()
    assert _codes(database, "acme", MINUTE) == {"V200610SCHTRG": 2, "V200400SKPQTA": 3}
    assert _codes(database, "globex", MINUTE) == {"V200610SCHTRG": 3, "V200400SKPQTA": 2}


@pytest.mark.parametrize("label", ["1", "0", ""])
def test_tenant_metrics_count_fires_and_quota_skips_only_when_turned_on(
    database: Database,
    clock: FakeClock,
    service: ScheduleService,
    monkeypatch: pytest.MonkeyPatch,
    label: str,
) -> None:
    from cronplane.api.metrics import REGISTRY
    from cronplane.processes.node import Node, NodeOptions

    def sample(name: str, **labels: str) -> float:
        return REGISTRY.get_sample_value(name, labels) or 0.0

    monkeypatch.setenv("CRONPLANE_METRICS_TENANT_LABEL", label)
    _rows(service, "acme", 5)
    service.set_quota("acme", {"max_fires_per_minute": 2}, actor="admin")
    node = Node(database, NodeOptions(workers=0, alerts=False), clock)
    assert node.dispatcher is not None and node.dispatcher.on_tick is not None
    fires = ("cronplane_tenant_fires_total", {"tenant": "acme"})
    skips = ("cronplane_tenant_skips_total", {"tenant": "acme", "reason": "quota"})
    before = sample(fires[0], **fires[1]), sample(skips[0], **skips[1])
    quota_skips = sample("cronplane_skips_total", reason="quota")
    clock.set(MINUTE)
    node.dispatcher.on_tick(node.dispatcher.tick())
    after = sample(fires[0], **fires[1]), sample(skips[0], **skips[1])
    expected = (2.0, 3.0) if label == "1" else (0.0, 0.0)
    assert (after[0] - before[0], after[1] - before[1]) == expected
    assert sample("cronplane_skips_total", reason="quota") - quota_skips == 3


def test_housekeeping_fires_under_any_platform_default(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    from cronplane.service.housekeeping import SYSTEM_TENANT, ensure_system_schedules

    ensure_system_schedules(database, clock)
    _rows(service, "acme", 2)
    dispatcher = Dispatcher(
        database, clock, holder="a", ttl=10, quotas=Quota(max_fires_per_minute=0)
    )
    clock.set(START + timedelta(days=1))
    dispatcher.tick()
    fired = Counter((e.tenant, e.code) for e in ledger(database))
    assert fired[SYSTEM_TENANT, ev.SCHEDULE_FIRED.text] >= 1
    assert fired[SYSTEM_TENANT, ev.SKIPPED_QUOTA.text] == 0
    assert fired["acme", ev.SKIPPED_QUOTA.text] == 2 and fired["acme", ev.SCHEDULE_FIRED.text] == 0
