"""Tenant quotas at write time (issue 18): a write that would take a tenant past a limit is
refused with the limit's code, naming the limit and its value, and writes nothing; another
tenant is not affected; two creates racing for the last free schedule cannot both commit."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.quotas import Quota
from cronplane.errors import (
    CronplaneError,
    IntervalTooShort,
    IntervalUnderQuota,
    InvalidRequest,
    JobQuotaExceeded,
    QueueQuotaExceeded,
    ScheduleQuotaExceeded,
)
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from service_support import counts, snapshot

PROD = Scope("acme", "billing", "production")
OTHER = Scope("globex", "billing", "production")


def _job(service: ScheduleService, tenant: str = "globex") -> None:
    spec = JobSpec(name="report", target="python:billing.jobs:report")
    service.register_job(tenant, "billing", spec, actor="test")


def _add(service: ScheduleService, name: str, scope: Scope = PROD, cron: str = "0 * * * *") -> None:
    service.create_schedule(scope, ScheduleSpec(job="report", cron=cron, name=name), actor="t")


def test_max_schedules_refuses_the_create_past_it_and_writes_nothing(
    service: ScheduleService, database: Database
) -> None:
    service.set_quota("acme", {"max_schedules": 2}, actor="admin")
    _add(service, "one")
    _add(service, "two")
    before = snapshot(database), counts(database)
    with pytest.raises(ScheduleQuotaExceeded) as caught:
        _add(service, "three")
    error = caught.value
    assert error.code.text == "X403260QTASCH" and error.status == 403 and error.exit_code == 9
    assert error.detail["limit"] == "max_schedules" and error.detail["value"] == 2
    assert "quota max_schedules is 2" in error.message
    assert (snapshot(database), counts(database)) == before
    # Another tenant has no quota; removing one frees room.
    _job(service)
    _add(service, "three", OTHER)
    service.remove_schedule(PROD, "one", actor="t")
    _add(service, "three")


def test_group_create_admits_in_order_until_full(service: ScheduleService) -> None:
    from cronplane.service import NewSchedule

    service.set_quota("acme", {"max_schedules": 2}, actor="admin")
    requests = [
        NewSchedule(PROD, ScheduleSpec(job="report", cron="0 * * * *", name=f"s{n}"), "t")
        for n in range(4)
    ]
    results = service.create_schedules(requests)
    assert [isinstance(r, CronplaneError) for r in results] == [False, False, True, True]
    assert all(isinstance(r, ScheduleQuotaExceeded) for r in results[2:])


def test_max_jobs_refuses_a_registration(service: ScheduleService, database: Database) -> None:
    # The fixture registered two jobs for acme.
    service.set_quota("acme", {"max_jobs": 2}, actor="admin")
    with pytest.raises(JobQuotaExceeded) as caught:
        service.register_job(
            "acme", "billing", JobSpec(name="third", target="python:m:f"), actor="t"
        )
    assert caught.value.code.text == "X403261QTAJOB" and caught.value.detail["value"] == 2
    assert [job.name for job in service.list_jobs("acme", "billing")] == ["report", "typed"]


def test_a_tenant_min_interval_replaces_the_platform_minimum(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    strict = ScheduleService(database, clock, min_interval=10)
    # Raised for acme: refused with the quota's own code.
    strict.set_quota("acme", {"min_interval": 120}, actor="admin")
    with pytest.raises(IntervalUnderQuota) as caught:
        _add(strict, "fast", cron="* * * * *")
    assert caught.value.code.text == "X403262QTAINT"
    assert caught.value.detail == {
        "tenant": "acme",
        "limit": "min_interval",
        "value": 120,
        "cron": "* * * * *",
        "interval": 60,
    }
    _add(strict, "slow", cron="*/5 * * * *")
    with pytest.raises(IntervalUnderQuota):
        strict.update_schedule(PROD, "slow", SchedulePatch(cron="* * * * *"), actor="t")
    # Lowered for acme below the platform's 10 s: 5 s passes for acme only.
    strict.set_quota("acme", {"min_interval": 2}, actor="admin")
    _add(strict, "quick", cron="every 5 seconds")
    _job(strict)
    with pytest.raises(IntervalTooShort):
        _add(strict, "quick", OTHER, cron="every 5 seconds")


def test_enable_is_refused_for_a_row_faster_than_the_tenant_min_interval(
    service: ScheduleService,
) -> None:
    _add(service, "fast", cron="* * * * *")
    service.disable_schedule(PROD, "fast", actor="t")
    service.set_quota("acme", {"min_interval": 300}, actor="admin")
    with pytest.raises(IntervalUnderQuota):
        service.enable_schedule(PROD, "fast", actor="t")
    assert not service.get_schedule(PROD, "fast").enabled


def test_a_sync_past_max_schedules_is_refused_whole_with_its_plan(
    service: ScheduleService, database: Database
) -> None:
    _add(service, "hand")
    service.set_quota("acme", {"max_schedules": 3}, actor="admin")
    crons = {f"c{n}": CronDeclaration(job="report", cron="0 * * * *") for n in range(3)}
    before = snapshot(database), counts(database)
    for dry_run in (True, False):
        with pytest.raises(ScheduleQuotaExceeded) as caught:
            service.sync(PROD, crons, actor="deploy", dry_run=dry_run)
        detail = caught.value.detail
        assert detail["limit"] == "max_schedules" and detail["value"] == 3
        assert detail["held"] == 1 and detail["adding"] == 3
        assert detail["plan"]["created"] == ["c0", "c1", "c2"]
        assert detail["plan"]["summary"]["created"] == 3
    assert (snapshot(database), counts(database)) == before
    # Two fit: the sync is applied.
    del crons["c2"]
    assert len(service.sync(PROD, crons, actor="deploy").created) == 2


def test_a_sync_faster_than_the_tenant_min_interval_is_refused_whole(
    service: ScheduleService, database: Database
) -> None:
    service.set_quota("acme", {"min_interval": 3600}, actor="admin")
    crons = {
        "hourly": CronDeclaration(job="report", cron="0 * * * *"),
        "often": CronDeclaration(job="report", cron="*/5 * * * *"),
    }
    before = snapshot(database), counts(database)
    with pytest.raises(IntervalUnderQuota) as caught:
        service.sync(PROD, crons, actor="deploy")
    assert caught.value.detail["plan"]["created"] == ["hourly", "often"]
    assert (snapshot(database), counts(database)) == before


def test_max_queued_refuses_run_now_retry_and_backfill_with_429(
    service: ScheduleService, clock: FakeClock
) -> None:
    _add(service, "hourly")
    service.set_quota("acme", {"max_queued": 1}, actor="admin")
    first = service.run_now(PROD, "hourly", actor="t")
    with pytest.raises(QueueQuotaExceeded) as caught:
        service.run_now(PROD, "hourly", actor="t")
    error = caught.value
    assert error.code.text == "X429260QTAQUE" and error.status == 429 and error.exit_code == 9
    assert error.detail["limit"] == "max_queued" and error.detail["value"] == 1
    assert error.detail["queued"] == 1
    with pytest.raises(QueueQuotaExceeded):
        service.backfill_schedule(
            PROD,
            "hourly",
            actor="t",
            start=(clock.now() - timedelta(hours=3)).isoformat(),
            end=clock.now().isoformat(),
            allow_overlap=True,
        )
    # Room again once the item left the queue; then a retry of a failed one is judged too.
    service.cancel_item("acme", first.id, actor="t")
    assert service.run_now(PROD, "hourly", actor="t").status == "queued"
    assert len(service.list_items("acme", status="queued")) == 1


def test_set_quota_checks_values_and_clear_returns_to_the_default(
    database: Database, clock: FakeClock
) -> None:
    service = ScheduleService(database, clock, quotas=Quota(max_schedules=50))
    with pytest.raises(InvalidRequest):
        service.set_quota("acme", {"max_schedules": -1}, actor="admin")
    with pytest.raises(InvalidRequest):
        service.set_quota("acme", {"min_interval": 0}, actor="admin")
    with pytest.raises(InvalidRequest):
        service.set_quota("acme", {"max_bananas": 1}, actor="admin")
    usage = service.set_quota("acme", {"max_schedules": 5, "max_queued": 7}, actor="admin")
    assert usage.quota.max_schedules == 5 and usage.quota.max_queued == 7
    assert usage.to_dict()["overrides"] == ["max_queued", "max_schedules"]
    usage = service.set_quota("acme", {}, clear=("max_schedules",), actor="admin")
    assert usage.quota.max_schedules == 50 and usage.quota.max_queued == 7
    event = service.audit.list("acme", codes=["V200401QTASET"])[0]  # newest first
    assert event.detail["changes"] == {"max_schedules": {"from": 5, "to": None}}
    # A limit both set and cleared is refused, and changes nothing.
    with pytest.raises(InvalidRequest, match="both set and cleared"):
        service.set_quota("acme", {"max_queued": 9}, clear=("max_queued",), actor="admin")
    assert service.tenant_usage("acme").quota.max_queued == 7


def test_tenant_listing_shows_usage_against_quota(service: ScheduleService) -> None:
    _add(service, "one")
    service.set_quota("initech", {"max_jobs": 3}, actor="admin")
    listing = {usage.tenant: usage for usage in service.list_tenants()}
    assert set(listing) == {"acme", "initech"}
    assert (listing["acme"].schedules, listing["acme"].jobs) == (1, 2)
    assert listing["initech"].quota.max_jobs == 3 and listing["initech"].schedules == 0
    service.run_now(PROD, "one", actor="t")
    shown = service.tenant_usage("acme")
    assert (shown.queued, shown.fires_last_hour) == (1, 0)  # a run now is not a fire


def test_racing_creates_cannot_pass_max_schedules_together(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    service.set_quota("acme", {"max_schedules": 3}, actor="admin")
    # Separate services (as separate API workers would be) over one database.
    racers = [ScheduleService(database, clock) for _ in range(8)]

    def create(n: int) -> bool:
        try:
            _add(racers[n], f"race{n}")
        except ScheduleQuotaExceeded:
            return False
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        created = list(pool.map(create, range(8)))
    assert sum(created) == 3
    assert service.tenant_usage("acme").schedules == 3


def test_an_install_past_max_jobs_is_refused_whole(
    service: ScheduleService, database: Database
) -> None:
    from cronplane.manifest import parse_manifest

    service.set_quota("acme", {"max_jobs": 3}, actor="admin")
    manifest = parse_manifest(
        """
name: shop
jobs:
  pack: {target: "python:shop:pack"}
  ship: {target: "python:shop:ship"}
crons:
  pack: "0 * * * *"
"""
    )
    before = snapshot(database), counts(database)
    for dry_run in (True, False):
        with pytest.raises(JobQuotaExceeded) as caught:
            service.install_app("acme", "production", manifest, actor="deploy", dry_run=dry_run)
        assert caught.value.detail["adding"] == 2 and caught.value.detail["held"] == 2
    assert (snapshot(database), counts(database)) == before
    assert len(service.list_jobs("acme", "shop")) == 0


def test_the_housekeeping_tenant_is_exempt_and_not_listed(
    database: Database, clock: FakeClock
) -> None:
    from cronplane.core.quotas import EXEMPT_TENANTS
    from cronplane.service.housekeeping import SYSTEM_TENANT, ensure_system_schedules

    assert {SYSTEM_TENANT} == EXEMPT_TENANTS
    service = ScheduleService(database, clock, quotas=Quota(max_fires_per_minute=0))
    ensure_system_schedules(database, clock)
    assert SYSTEM_TENANT not in {usage.tenant for usage in service.list_tenants()}
    with pytest.raises(InvalidRequest):
        service.set_quota(SYSTEM_TENANT, {"max_jobs": 1}, actor="admin")
