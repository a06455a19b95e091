"""Schedule versions (issue 38): every definition change writes one, in its transaction;
diff, rollback and restore act on them. Both databases."""

from __future__ import annotations

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.core.versions import ROLLBACK_FIELDS, definition_of
from cronplane.errors import (
    AppOwned,
    NothingToRestore,
    RestoreNameTaken,
    ScheduleQuotaExceeded,
    StaleRevision,
    VersionJobGone,
    VersionNotFound,
)
from cronplane.service import ScheduleService, housekeeping
from cronplane.service.base import changes_via
from cronplane.store import versions as version_store
from service_support import counts

PROD = Scope("acme", "billing", "production")


def _numbers(service: ScheduleService, name: str) -> list[int]:
    return [v.number for v in service.list_versions(PROD, name)]


def _create(service: ScheduleService, name: str = "nightly", cron: str = "0 2 * * *") -> None:
    service.create_schedule(PROD, ScheduleSpec(job="report", cron=cron, name=name), actor="ann")


def test_every_kind_of_change_writes_one_version(
    service: ScheduleService, clock: FakeClock
) -> None:
    """The rule of docs/architecture.md: each definition change, by whichever path,
    leaves a version equal to the row it wrote, naming who and how."""
    _create(service)
    steps = [
        ("update", lambda: service.update_schedule(PROD, "nightly", SchedulePatch(cron="0 3 * * *"), actor="bob")),
        ("labels", lambda: service.update_schedule(PROD, "nightly", SchedulePatch(labels={"team": "pay"}), actor="bob")),
        ("window", lambda: service.update_schedule(PROD, "nightly", SchedulePatch(max_runs=9), actor="bob")),
        ("disable", lambda: service.disable_schedule(PROD, "nightly", actor="cy")),
        ("enable", lambda: service.enable_schedule(PROD, "nightly", actor="cy")),
        ("pause", lambda: service.pause_schedule(PROD, "nightly", actor="dee", note="db move")),
        ("resume", lambda: service.resume_schedule(PROD, "nightly", actor="dee")),
    ]  # fmt: skip
    for step, (_label, act) in enumerate(steps, start=2):
        clock.advance(minutes=1)
        act()
        versions = service.list_versions(PROD, "nightly")
        assert [v.number for v in versions] == list(range(step, 0, -1))
        row = service.get_schedule(PROD, "nightly")
        assert versions[0].definition == definition_of(row)
        assert versions[0].at == clock.now() and versions[0].via == "service"
    by = [v.actor for v in reversed(service.list_versions(PROD, "nightly"))]
    assert by == ["ann", "bob", "bob", "bob", "cy", "cy", "dee", "dee"]
    # A run recorded is not a definition change: no version.
    service.record_run(PROD, "nightly", actor="eve")
    assert len(_numbers(service, "nightly")) == 8


def test_sync_and_removal_write_versions_with_the_digest(service: ScheduleService) -> None:
    crons = {"hourly": CronDeclaration(cron="0 * * * *", job="report")}
    service.sync(PROD, crons, actor="deploy")
    service.sync(PROD, {"hourly": CronDeclaration(cron="5 * * * *", job="report")}, actor="deploy")
    service.sync(PROD, {}, actor="deploy")
    with service.database.read() as conn:
        (last,) = [version_store.last_of_name(conn, "acme", "billing", "production", "hourly")]
        assert last is not None and last.removed and last.number == 3
        first = version_store.get_version(conn, last.schedule_id, 1)
    assert first is not None and first.via == "sync" and first.digest
    assert first.digest.startswith("sha256:") and first.digest != last.digest


def test_changes_via_stamps_how_and_why(service: ScheduleService) -> None:
    _create(service)
    with changes_via("console", "ticket 7"):
        service.update_schedule(PROD, "nightly", SchedulePatch(cron="0 4 * * *"), actor="ann")
    latest = service.list_versions(PROD, "nightly")[0]
    assert (latest.via, latest.reason) == ("console", "ticket 7")


def test_diff_defaults_to_previous_against_current(service: ScheduleService) -> None:
    _create(service)
    service.update_schedule(PROD, "nightly", SchedulePatch(cron="30 6 * * *"), actor="bob")
    shown = service.diff_versions(PROD, "nightly")
    assert (shown.before.number, shown.after.number) == (1, 2)
    assert [(c.field, c.before, c.after) for c in shown.changes] == [
        ("cron", "0 2 * * *", "30 6 * * *")
    ]
    assert "02:00" in shown.described[0] and "06:30" in shown.described[1]
    assert len(shown.runs[0]) == 5 and {r.hour for r in shown.runs[0]} == {2}
    assert {(r.hour, r.minute) for r in shown.runs[1]} == {(6, 30)}
    with pytest.raises(VersionNotFound):
        service.diff_versions(PROD, "nightly", 1, 9)


def test_rollback_is_an_edit_with_a_new_version(service: ScheduleService) -> None:
    _create(service)
    service.update_schedule(
        PROD, "nightly", SchedulePatch(cron="0 5 * * *", payload={"kind": "x"}), actor="bob"
    )
    before = counts(service.database)
    preview = service.rollback_schedule(PROD, "nightly", to=1, actor="cy", dry_run=True)
    assert preview.dry_run and {c.field for c in preview.changes} == {"cron", "payload"}
    assert counts(service.database) == before and _numbers(service, "nightly") == [2, 1]
    done = service.rollback_schedule(PROD, "nightly", to=1, actor="cy", reason="bad deploy")
    versions = service.list_versions(PROD, "nightly")
    assert [v.number for v in versions] == [3, 2, 1]
    assert (versions[0].via, versions[0].reason, versions[0].actor) == (
        "rollback",
        "bad deploy",
        "cy",
    )
    pick = {k: versions[0].definition[k] for k in ROLLBACK_FIELDS}
    assert pick == {k: versions[2].definition[k] for k in ROLLBACK_FIELDS}
    assert done.schedule.cron == "0 2 * * *" and done.schedule.revision == 3
    with pytest.raises(StaleRevision):
        service.rollback_schedule(PROD, "nightly", to=2, actor="cy", revision=1)
    with pytest.raises(VersionNotFound):
        service.rollback_schedule(PROD, "nightly", to=42, actor="cy")
    assert _numbers(service, "nightly") == [3, 2, 1]


def test_rollback_refuses_a_version_whose_job_is_gone(service: ScheduleService) -> None:
    service.create_schedule(
        PROD, ScheduleSpec(job="typed", cron="0 2 * * *", name="nightly"), actor="ann"
    )
    service.update_schedule(PROD, "nightly", SchedulePatch(job="report"), actor="ann")
    service.deactivate_job("acme", "billing", "typed", actor="ann")
    before = counts(service.database)
    with pytest.raises(VersionJobGone) as refused:
        service.rollback_schedule(PROD, "nightly", to=1, actor="cy")
    assert refused.value.code.text == "X409380VERJOB" and refused.value.exit_code == 4
    assert counts(service.database) == before and _numbers(service, "nightly") == [2, 1]


def test_rollback_of_an_app_row_becomes_an_override(service: ScheduleService) -> None:
    service.sync(PROD, {"hourly": CronDeclaration(cron="0 * * * *", job="report")}, actor="d")
    service.update_schedule(PROD, "hourly", SchedulePatch(cron="7 * * * *"), actor="ops")
    service.sync(PROD, {"hourly": CronDeclaration(cron="0 * * * *", job="report", misfire_grace=60)}, actor="d")  # fmt: skip
    row = service.rollback_schedule(PROD, "hourly", to=1, actor="ops").schedule
    assert row.source == "app" and row.cron == "0 * * * *" and row.misfire_grace is None
    assert "misfire_grace" in row.overrides
    # A version whose job differs cannot be rolled back to on an app row: the manifest owns it.
    with pytest.raises(AppOwned):
        service.update_schedule(PROD, "hourly", SchedulePatch(job="typed"), actor="ops")


def test_restore_brings_back_a_deleted_row(service: ScheduleService, clock: FakeClock) -> None:
    _create(service)
    service.update_schedule(PROD, "nightly", SchedulePatch(cron="0 4 * * *"), actor="bob")
    service.remove_schedule(PROD, "nightly", actor="bob")
    with pytest.raises(RestoreNameTaken):
        _create(service, "other")
        service.restore_schedule(PROD, "other", actor="x")
    clock.advance(days=3)
    row = service.restore_schedule(PROD, "nightly", actor="cy", reason="oops")
    assert row.cron == "0 4 * * *" and row.next_run is not None and row.next_run > clock.now()
    versions = service.list_versions(PROD, "nightly")
    assert [v.number for v in versions] == [4, 3, 2, 1]
    assert (versions[0].via, versions[0].reason) == ("restore", "oops")
    assert versions[1].removed and not versions[0].removed


def test_restore_refuses_past_retention_or_never_deleted(
    service: ScheduleService, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CRONPLANE_VERSION_RETENTION", "10")
    with pytest.raises(NothingToRestore):
        service.restore_schedule(PROD, "never", actor="x")
    _create(service)
    service.remove_schedule(PROD, "nightly", actor="bob")
    clock.advance(days=11)
    before = counts(service.database)
    with pytest.raises(NothingToRestore) as refused:
        service.restore_schedule(PROD, "nightly", actor="x")
    assert refused.value.exit_code == 3 and counts(service.database) == before


def test_prune_keeps_each_live_rows_last_twenty(service: ScheduleService, clock: FakeClock) -> None:
    _create(service)
    _create(service, "gone")
    for minute in range(1, 31):
        service.update_schedule(PROD, "nightly", SchedulePatch(cron=f"{minute} 2 * * *"), actor="b")
    service.remove_schedule(PROD, "gone", actor="b")
    clock.advance(days=2)
    pruned = housekeeping.prune(service.database, clock, 30, version_retention_days=1)
    assert pruned["versions"] == 11 + 2
    assert _numbers(service, "nightly") == list(range(31, 11, -1))
    service.update_schedule(PROD, "nightly", SchedulePatch(cron="0 9 * * *"), actor="b")
    assert _numbers(service, "nightly")[0] == 32


def test_selection_reset_and_housekeeping_changes_write_versions(
    service: ScheduleService, clock: FakeClock
) -> None:
    """The other paths that change a definition: an action by selector (through the
    single-row use cases), a reset to the manifest, housekeeping's own rows."""
    service.create_schedule(
        PROD, ScheduleSpec(job="report", cron="0 2 * * *", name="a", labels={"t": "x"}), actor="a"
    )
    report = service.act_on_selection(
        "acme", "pause", ScheduleQuery(selector="t=x"), actor="sel", confirm=True
    )
    assert report is not None
    latest = service.list_versions(PROD, "a")[0]
    assert (latest.number, latest.actor, latest.definition["paused_at"]) == (
        2, "sel", clock.now().isoformat()
    )  # fmt: skip
    service.sync(PROD, {"h": CronDeclaration(cron="0 * * * *", job="report")}, actor="d")
    service.update_schedule(PROD, "h", SchedulePatch(cron="9 * * * *"), actor="ops")
    service.reset_to_manifest(PROD, "h", actor="ops")
    reset = service.list_versions(PROD, "h")[0]
    assert (reset.number, reset.definition["cron"], reset.definition["overrides"]) == (
        3, "0 * * * *", []
    )  # fmt: skip
    housekeeping.ensure_system_schedules(service.database, clock, retention_days=30)
    housekeeping.ensure_system_schedules(service.database, clock, retention_days=7)
    system = Scope("_system", "cronplane", "default")
    prune = service.list_versions(system, "prune-history")
    assert [(v.number, v.via, v.actor) for v in prune] == [
        (2, "system", "system"),
        (1, "system", "system"),
    ]
    assert prune[0].definition["payload"] == {"retention_days": 7}


def test_a_restore_fits_the_tenants_quota(service: ScheduleService) -> None:
    _create(service)
    service.remove_schedule(PROD, "nightly", actor="bob")
    _create(service, "other")
    service.set_quota("acme", {"max_schedules": 1}, actor="admin")
    before = counts(service.database)
    with pytest.raises(ScheduleQuotaExceeded):
        service.restore_schedule(PROD, "nightly", actor="cy")
    assert counts(service.database) == before and _numbers(service, "other") == [1]
