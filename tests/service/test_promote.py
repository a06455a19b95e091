"""Environments diffed and promoted (issue 38, service.promotion), on both databases:
the diff field by field with overrides marked, a promote that applies exactly the diff
(versions `via: promote`), idempotence, the token, and all or nothing under a
concurrent edit (between the diff and the promote, and inside the promote itself)."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, JobPatch, JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.promotion import EnvironmentDiff
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import (
    InvalidName,
    JobInactive,
    PromoteConflict,
    PromoteOwnership,
    ScheduleNotFound,
    ScheduleQuotaExceeded,
)
from cronplane.service import ScheduleService
from cronplane.service.promotion import Promotion
from cronplane.store.database import Database
from service_support import START, counts, snapshot

STAGING = Scope("acme", "billing", "staging")
PROD = Scope("acme", "billing", "prod")
STAGING_CRONS = {
    "hourly": CronDeclaration(cron="0 * * * *", job="report"),
    "nightly": CronDeclaration(cron="0 2 * * *", job="report"),
}
PROD_CRONS = {
    "hourly": CronDeclaration(cron="0 * * * *", job="report"),
    "nightly": CronDeclaration(cron="0 3 * * *", job="report"),
    "clash": CronDeclaration(cron="@daily", job="report"),
}


def _user(service: ScheduleService, scope: Scope, name: str, cron: str, **more: Any) -> None:
    spec = ScheduleSpec(job="report", cron=cron, name=name, **more)
    service.create_schedule(scope, spec, actor="ann")


def _world(service: ScheduleService) -> None:
    """Staging and prod of acme/billing: app rows (one overridden on each side), user
    rows only in one side, one the same on both, one name owned differently."""
    service.sync(STAGING, STAGING_CRONS, actor="deploy")
    service.sync(PROD, PROD_CRONS, actor="deploy")
    service.update_schedule(STAGING, "hourly", SchedulePatch(cron="15 * * * *"), actor="ann")
    service.update_schedule(PROD, "nightly", SchedulePatch(payload={"kind": "prod"}), actor="ann")
    _user(service, STAGING, "adhoc", "*/30 * * * *", labels={"team": "pay"})
    _user(service, PROD, "prod-only", "0 9 * * *")
    _user(service, STAGING, "same", "0 12 * * *")
    _user(service, PROD, "same", "0 12 * * *")
    _user(service, STAGING, "clash", "0 1 * * *")


def _statuses(diff: EnvironmentDiff) -> dict[str, str]:
    return {item.name: item.status for item in diff.schedules}


def _promote(service: ScheduleService, **more: Any) -> Any:
    return service.promote_environment("acme", "staging", "prod", actor="rel", **more)


@pytest.fixture
def world(service: ScheduleService) -> ScheduleService:
    _world(service)
    return service


def test_the_diff_field_by_field_with_overrides(world: ScheduleService) -> None:
    diff = world.diff_environments("acme", "staging", "prod", stack="billing")
    assert _statuses(diff) == {
        "adhoc": "only_in_source",
        "clash": "conflict",
        "hourly": "differs",
        "nightly": "differs",
        "prod-only": "only_in_target",
        "same": "same",
    }
    by = {item.name: item for item in diff.schedules}
    hourly = {f.field: f for f in by["hourly"].fields}
    assert list(hourly) == ["cron", "overrides"]
    cron = hourly["cron"]
    assert (cron.target, cron.source) == ("0 * * * *", "15 * * * *")
    assert (cron.target_override, cron.source_override) == (False, True)
    assert (hourly["overrides"].target, hourly["overrides"].source) == ([], ["cron"])
    nightly = {f.field: f for f in by["nightly"].fields}
    assert list(nightly) == ["cron", "payload", "overrides", "declared"]
    payload = nightly["payload"]
    assert (payload.target, payload.source) == ({"kind": "prod"}, {"kind": "daily"})
    assert (payload.target_override, payload.source_override) == (True, False)
    assert (by["clash"].source_kind, by["clash"].target_kind) == ("user", "app")
    assert diff.summary() == {
        "only_in_source": 1, "differs": 2, "same": 1, "only_in_target": 1, "conflict": 1
    }  # fmt: skip
    # Every stack by default (the same here); the token is the same for the same rows.
    assert world.diff_environments("acme", "staging", "prod").schedules == diff.schedules
    again = world.diff_environments("acme", "staging", "prod", stack="billing")
    assert again.token == diff.token
    # Reversed, old and new swap.
    back = world.diff_environments("acme", "prod", "staging", stack="billing")
    assert _statuses(back)["adhoc"] == "only_in_target"
    (cron_back,) = [f for s in back.schedules if s.name == "hourly" for f in s.fields][:1]
    assert (cron_back.source, cron_back.source_override) == ("0 * * * *", False)


def test_promote_applies_exactly_the_diff_and_writes_versions(
    world: ScheduleService, database: Database, clock: FakeClock
) -> None:
    clock.advance(minutes=5)
    diff = world.diff_environments("acme", "staging", "prod")
    before = {row.name: row for row in _rows(world, PROD)}
    written = counts(database)
    dry = _promote(world, dry_run=True, token=diff.token)
    assert counts(database) == written and dry.dry_run
    report = _promote(world, token=diff.token, reason="release 7")
    assert dry == replace(report, dry_run=True)
    assert [s.key for s in report.created] == ["billing/adhoc"]
    assert [s.key for s in report.updated] == ["billing/hourly", "billing/nightly"]
    assert report.updated == diff.of("differs")
    assert report.unchanged == ("billing/same",) and report.left == ("billing/prod-only",)
    assert [s.key for s in report.conflicts] == ["billing/clash"]

    after = world.diff_environments("acme", "staging", "prod")
    assert _statuses(after) == {
        **_statuses(diff),
        "adhoc": "same",
        "hourly": "same",
        "nightly": "same",
    }
    rows = {row.name: row for row in _rows(world, PROD)}
    # Only what the diff named changed: the rest keeps its revision.
    for name in ("prod-only", "same", "clash"):
        assert rows[name].revision == before[name].revision
    assert rows["hourly"].cron == "15 * * * *" and rows["hourly"].overrides == ("cron",)
    assert rows["nightly"].payload == {"kind": "daily"} and rows["nightly"].overrides == ()
    assert rows["nightly"].declared == world.get_schedule(STAGING, "nightly").declared
    created = rows["adhoc"]
    assert (created.source, created.labels, created.run_count) == ("user", {"team": "pay"}, 0)
    assert created.last_run == clock.now() and created.next_run is not None
    assert created.next_run > clock.now() and created.id != world.get_schedule(STAGING, "adhoc").id
    for name in ("adhoc", "hourly", "nightly"):
        latest = world.list_versions(PROD, name)[0]
        assert (latest.via, latest.actor) == ("promote", "rel")
        assert latest.reason == "promoted from staging: release 7"
        assert latest.definition["cron"] == rows[name].cron
    assert world.list_versions(PROD, "same")[0].via != "promote"
    # The target's own next sync treats the promoted rows like any: the override stays.
    kept = world.sync(PROD, {**PROD_CRONS, "nightly": STAGING_CRONS["nightly"]}, actor="deploy")
    assert "hourly" in kept.unchanged and "nightly" in kept.unchanged


def test_a_second_promote_writes_nothing(world: ScheduleService, database: Database) -> None:
    _promote(world)
    written, rows = counts(database), snapshot(database)
    again = _promote(world)
    assert not again.writes and again.created == () and again.updated == ()
    assert counts(database) == written and snapshot(database) == rows


def test_only_limits_the_promote(world: ScheduleService) -> None:
    report = _promote(world, only=["hourly", "billing/adhoc"])
    assert [s.key for s in (*report.created, *report.updated)] == [
        "billing/adhoc",
        "billing/hourly",
    ]
    assert _statuses(world.diff_environments("acme", "staging", "prod"))["nightly"] == "differs"
    with pytest.raises(ScheduleNotFound) as unknown:
        _promote(world, only=["nightly", "prod-only", "nope"])
    assert unknown.value.detail["names"] == ["nope", "prod-only"]
    with pytest.raises(PromoteOwnership) as owned:
        _promote(world, only=["clash"])
    assert owned.value.detail["names"] == ["billing/clash"]


def test_a_stale_token_refuses_the_whole_promote(
    world: ScheduleService, database: Database
) -> None:
    """A thread edits a target row between the diff and the promote: nothing of the
    promote lands; the same for a source row (what was reviewed is what is applied)."""
    diff = world.diff_environments("acme", "staging", "prod")
    edit = threading.Thread(
        target=world.update_schedule,
        args=(PROD, "prod-only", SchedulePatch(cron="0 10 * * *")),
        kwargs={"actor": "bob"},
    )
    edit.start()
    edit.join()
    written, rows = counts(database), snapshot(database)
    with pytest.raises(PromoteConflict) as refused:
        _promote(world, token=diff.token)
    assert refused.value.detail["sides"] == ["target"] and refused.value.exit_code == 4
    assert counts(database) == written and snapshot(database) == rows
    fresh = world.diff_environments("acme", "staging", "prod")
    world.update_schedule(STAGING, "same", SchedulePatch(cron="0 13 * * *"), actor="bob")
    with pytest.raises(PromoteConflict) as moved:
        _promote(world, token=fresh.token, dry_run=True)
    assert moved.value.detail["sides"] == ["source"]
    with pytest.raises(PromoteConflict):
        _promote(world, token="not-a-token")
    assert _promote(world, token=world.diff_environments("acme", "staging", "prod").token).writes


def test_jobs_must_be_active_and_quotas_hold(world: ScheduleService, database: Database) -> None:
    """Jobs belong to the stack: both environments run the same ones, so a promote never
    registers one, but refuses (naming it) a row whose job is inactive."""
    world.update_job("acme", "billing", "report", JobPatch(status="inactive"), actor="ann")
    written = counts(database)
    with pytest.raises(JobInactive) as inactive:
        _promote(world)
    assert inactive.value.detail["jobs"] == ["billing/report"]
    assert counts(database) == written
    world.update_job("acme", "billing", "report", JobPatch(status="active"), actor="ann")
    held = sum(1 for _ in _rows(world, PROD)) + sum(1 for _ in _rows(world, STAGING))
    world.set_quota("acme", {"max_schedules": held}, actor="admin")
    with pytest.raises(ScheduleQuotaExceeded):
        _promote(world)
    assert counts(database)[0] == written[0]


def test_one_environment_twice_or_an_empty_one(world: ScheduleService) -> None:
    assert set(_statuses(world.diff_environments("acme", "prod", "prod")).values()) == {"same"}
    assert not world.promote_environment("acme", "prod", "prod", actor="rel").writes
    assert world.diff_environments("acme", "staging", "nowhere").summary()["only_in_source"] == 5
    with pytest.raises(InvalidName):
        world.diff_environments("acme", "staging", "no way")


@pytest.mark.postgres
def test_an_edit_inside_the_promote_rolls_it_all_back(
    pg_database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL: another session edits a target row after the promote read it and before
    it wrote it. The promote's update of that row finds its revision moved and refuses;
    the row it had already created and the one it had already updated roll back."""
    service = _service(pg_database)
    _world(service)
    plan = Promotion._plan

    def plan_then_edit(self: Promotion, *args: Any, **kwargs: Any) -> Any:
        report = plan(self, *args, **kwargs)
        if not kwargs["dry_run"]:
            edit = threading.Thread(
                target=service.update_schedule,
                args=(PROD, "nightly", SchedulePatch(cron="0 4 * * *")),
                kwargs={"actor": "bob"},
            )
            edit.start()
            edit.join(timeout=30)
            assert not edit.is_alive(), "the concurrent edit waited on the promote"
        return report

    monkeypatch.setattr(Promotion, "_plan", plan_then_edit)
    with pytest.raises(PromoteConflict) as refused:
        _promote(service)
    assert refused.value.detail["names"] == ["billing/nightly"]
    monkeypatch.setattr(Promotion, "_plan", plan)
    rows = {row.name: row for row in _rows(service, PROD)}
    assert "adhoc" not in rows and rows["hourly"].cron == "0 * * * *"
    assert rows["nightly"].cron == "0 4 * * *"  # the edit landed, the promote did not
    for name in ("hourly", "nightly"):
        assert all(v.via != "promote" for v in service.list_versions(PROD, name))
    # Taken again, the promote applies on top of the edit.
    assert [s.key for s in _promote(service).updated] == ["billing/hourly", "billing/nightly"]


def _service(database: Database) -> ScheduleService:
    service = ScheduleService(database, FakeClock(START))
    spec = JobSpec(name="report", target="python:billing.jobs:report", payload={"kind": "daily"})
    service.register_job("acme", "billing", spec, actor="test")
    return service


def _rows(service: ScheduleService, scope: Scope) -> list[Any]:
    query = ScheduleQuery(stack=scope.stack, environment=scope.environment, limit=1000)
    return list(service.list_schedules("acme", query).items)
