"""SPEC §5 sync, app install/uninstall, on SQLite and PostgreSQL."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import UTC, datetime

import pytest

from cronplane import events
from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import InvalidManifest
from cronplane.manifest import parse_manifest
from cronplane.service import ScheduleService
from cronplane.service.sync import BULK_LOAD_ROWS
from cronplane.store.database import Database
from cronplane.store.events import list_events
from service_support import counts, snapshot
from spec_manifest import SPEC_MANIFEST

PROD = Scope("acme", "billing", "production")
CRONS = {
    "report": CronDeclaration(cron="*/15 * * * *"),
    "nightly": CronDeclaration(
        cron="at 02:30", job="report", timezone="Europe/London", payload={"kind": "nightly"}
    ),
    "spread": CronDeclaration(cron="H * * * *", job="typed", misfire_grace=300),
}


def test_first_sync_creates_and_a_second_writes_nothing(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    plan = service.sync(PROD, CRONS, actor="deploy")
    assert [c.name for c in plan.created] == ["nightly", "report", "spread"]
    assert not plan.updated and not plan.removed and not plan.conflicts
    rows = {s.name: s for s in service.list_schedules("acme").items}
    assert rows["report"].payload == {"kind": "daily"} and rows["report"].source == "app"
    assert rows["nightly"].cron == "30 2 * * *" and rows["nightly"].timezone == "Europe/London"
    assert rows["nightly"].next_run == datetime(2026, 1, 6, 2, 30, tzinfo=UTC)
    assert rows["spread"].payload == {"batch": 1} and "H" not in rows["spread"].cron
    assert rows["spread"].declared is not None and rows["spread"].declared["misfire_grace"] == 300
    with database.read() as conn:
        codes = [e.code for e in list_events(conn, tenant="acme")]
    assert codes.count(events.SCHEDULE_CREATED.text) == 3 and events.APP_SYNCED.text in codes

    before = snapshot(database), counts(database)
    clock.advance(hours=1)
    again = service.sync(PROD, CRONS, actor="deploy")
    assert not again.writes and again.unchanged == ("nightly", "report", "spread")
    assert (snapshot(database), counts(database)) == before


def test_a_changed_declaration_updates_only_fields_no_operator_overrode(
    service: ScheduleService, database: Database
) -> None:
    service.sync(PROD, CRONS, actor="deploy")
    service.update_schedule(PROD, "nightly", SchedulePatch(cron="at 04:00"), actor="ops")
    service.disable_schedule(PROD, "report", actor="ops")
    changed = {
        **CRONS,
        "nightly": CronDeclaration(
            cron="at 01:00", job="report", timezone="UTC", payload={"kind": "v2"}
        ),
        "report": CronDeclaration(cron="*/5 * * * *"),
    }
    plan = service.sync(PROD, changed, actor="deploy")
    assert {u.name: sorted(u.changes) for u in plan.updated} == {
        "nightly": ["payload", "timezone"],
        "report": ["cron"],
    }
    assert [(d.name, d.field, d.current, d.declared) for d in plan.drift] == [
        ("nightly", "cron", "0 4 * * *", "0 1 * * *")
    ]
    nightly = service.get_schedule(PROD, "nightly")
    assert nightly.cron == "0 4 * * *" and nightly.payload == {"kind": "v2"}
    assert nightly.timezone == "UTC" and nightly.overrides == ("cron",)
    report = service.get_schedule(PROD, "report")
    # Sync never touches enabled: the operator's disable survives, with no next_run.
    assert report.cron == "*/5 * * * *" and not report.enabled and report.next_run is None
    before = snapshot(database), counts(database)
    steady = service.sync(PROD, changed, actor="deploy")
    assert not steady.writes and [d.name for d in steady.drift] == ["nightly"]
    assert (snapshot(database), counts(database)) == before
    # Reset brings the declared value back.
    assert service.reset_to_manifest(PROD, "nightly", actor="ops").cron == "0 1 * * *"


def test_undeclared_app_rows_are_removed_and_user_rows_are_never_touched(
    service: ScheduleService, database: Database
) -> None:
    service.create_schedule(
        PROD, ScheduleSpec(job="typed", name="mine", cron="@daily"), actor="ops"
    )
    service.create_schedule(
        PROD, ScheduleSpec(job="report", name="spread", cron="@daily"), actor="ops"
    )
    plan = service.sync(PROD, CRONS, actor="deploy")
    assert [(c.name, c.source) for c in plan.conflicts] == [("spread", "user")]
    assert service.get_schedule(PROD, "spread").source == "user"
    assert service.get_schedule(PROD, "spread").cron == "0 0 * * *"
    plan = service.sync(PROD, {"report": CRONS["report"]}, actor="deploy")
    assert [r.name for r in plan.removed] == ["nightly"]
    names = sorted(s.name for s in service.list_schedules("acme").items)
    assert names == ["mine", "report", "spread"]
    # Other scopes are untouched by this scope's sync.
    staging = Scope("acme", "billing", "staging")
    service.sync(staging, CRONS, actor="deploy")
    service.sync(PROD, {}, actor="deploy")
    assert sorted(
        s.name for s in service.list_schedules("acme", ScheduleQuery(environment="staging")).items
    ) == [
        "nightly",
        "report",
        "spread",
    ]
    assert sorted(
        s.name
        for s in service.list_schedules("acme", ScheduleQuery(environment="production")).items
    ) == [
        "mine",
        "spread",
    ]


def test_dry_run_reports_the_plan_and_writes_nothing(
    service: ScheduleService, database: Database
) -> None:
    before = snapshot(database), counts(database)
    plan = service.sync(PROD, CRONS, actor="deploy", dry_run=True)
    assert len(plan.created) == 3
    assert (snapshot(database), counts(database)) == before
    assert service.sync(PROD, CRONS, actor="deploy") == plan


def test_an_invalid_declaration_applies_nothing_and_lists_every_problem(
    service: ScheduleService, database: Database
) -> None:
    bad = {
        **CRONS,
        "nightly-report": CronDeclaration(cron="at 25:00", job="report"),
        "ghost": CronDeclaration(cron="@daily", job="missing"),
        "typed": CronDeclaration(cron="@daily", payload={"batch": "many"}),
        "zoned": CronDeclaration(cron="@daily", job="report", timezone="Nowhere/Land"),
    }
    before = snapshot(database), counts(database)
    with pytest.raises(InvalidManifest) as caught:
        service.sync(PROD, bad, actor="deploy")
    problems = caught.value.detail["problems"]
    assert [p.split(":")[0] for p in problems] == [
        "crons.ghost.job",
        "crons.nightly-report.cron",
        "crons.typed.payload",
        "crons.zoned.timezone",
    ]
    assert (
        problems[1].startswith("crons.nightly-report.cron: X400001CRNINV")
        and "25:00" in problems[1]
    )
    assert (snapshot(database), counts(database)) == before


MANIFEST = SPEC_MANIFEST


def test_install_registers_jobs_then_syncs_and_uninstall_removes_and_deactivates(
    database: Database, clock: FakeClock
) -> None:
    service = ScheduleService(database, clock)
    manifest = parse_manifest(MANIFEST)
    dry = service.install_app("acme", "production", manifest, actor="deploy", dry_run=True)
    assert dry.jobs_registered == ("build-report", "send-invoices") and len(dry.plan.created) == 2
    assert counts(database) == (0, 0)
    report = service.install_app("acme", "production", manifest, actor="deploy")
    assert report.jobs_registered == ("send-invoices", "build-report") or set(
        report.jobs_registered
    ) == {"send-invoices", "build-report"}
    assert [c.name for c in report.plan.created] == ["nightly-report", "send-invoices"]
    row = service.get_schedule(PROD, "send-invoices")
    assert row.payload == {"batch": 100} and row.job == "send-invoices"
    before = snapshot(database), counts(database)
    again = service.install_app("acme", "production", manifest, actor="deploy")
    assert not again.plan.writes and not again.jobs_registered and not again.jobs_updated
    assert (snapshot(database), counts(database)) == before

    service.install_app("acme", "staging", manifest, actor="deploy")
    gone = service.uninstall_app(PROD, actor="deploy")
    assert len(gone.plan.removed) == 2 and gone.jobs_deactivated == ()  # staging still uses them
    gone = service.uninstall_app(Scope("acme", "billing", "staging"), actor="deploy")
    assert set(gone.jobs_deactivated) == {"build-report", "send-invoices"}
    assert all(not j.active for j in service.list_jobs("acme", "billing"))
    # Reinstall reactivates the jobs.
    service.install_app("acme", "production", manifest, actor="deploy")
    assert all(j.active for j in service.list_jobs("acme", "billing"))


def test_concurrent_syncs_in_threads_end_as_one(
    service: ScheduleService, database: Database
) -> None:
    crons = {f"c{i:03}": CronDeclaration(cron=f"{i % 60} * * * *", job="report") for i in range(60)}
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def run() -> None:
        try:
            barrier.wait()
            service.sync(PROD, crons, actor="deploy")
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    rows = service.list_schedules("acme", ScheduleQuery(limit=1000)).items
    assert len(rows) == 60 and {r.revision for r in rows} == {1}
    with database.read() as conn:
        synced = list_events(conn, tenant="acme", codes=[events.APP_SYNCED.text])
        created = list_events(conn, tenant="acme", codes=[events.SCHEDULE_CREATED.text], limit=1000)
    assert len(synced) == 1 and len(created) == 60


def _sync_in_process(url: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    database = Database(url)
    service = ScheduleService(database, FakeClock(datetime(2026, 1, 5, 12, tzinfo=UTC)))
    crons = {f"c{i:03}": CronDeclaration(cron=f"{i % 60} * * * *", job="report") for i in range(60)}
    barrier.wait()
    service.sync(PROD, crons, actor="deploy")
    database.dispose()


@pytest.mark.postgres
def test_concurrent_syncs_in_processes_end_as_one(pg_database: Database, clock: FakeClock) -> None:
    from cronplane.core.inputs import JobSpec

    service = ScheduleService(pg_database, clock)
    service.register_job("acme", "billing", JobSpec(name="report", target="celery:r"), actor="t")
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(3)
    processes = [
        context.Process(target=_sync_in_process, args=(pg_database.url, barrier)) for _ in range(3)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(60)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    assert len(service.list_schedules("acme", ScheduleQuery(limit=1000)).items) == 60
    with pg_database.read() as conn:
        assert len(list_events(conn, tenant="acme", codes=[events.APP_SYNCED.text])) == 1


def test_a_large_sync_refreshes_the_planner_statistics(
    pg_database: Database, clock: FakeClock
) -> None:
    # Without it, PostgreSQL plans with the empty table's estimates until
    # autovacuum runs, and a tenant listing sorts every row.
    service = ScheduleService(pg_database, clock)
    service.register_job("bulk", "app", JobSpec(name="report", target="python:m:f"), actor="t")

    def analyzed() -> dict[str, int]:
        """Times each table a schedule lives in was analyzed (both are read joined)."""
        with pg_database.read() as conn:
            query = (
                "SELECT relname, analyze_count FROM pg_stat_user_tables "
                "WHERE relname IN ('schedules', 'schedule_state')"
            )
            return {str(name): int(count) for name, count in conn.exec_driver_sql(query)}

    before = analyzed()
    small = {f"s{n}": CronDeclaration(cron="@daily", job="report") for n in range(10)}
    service.sync(Scope("bulk", "app", "small"), small, actor="t")
    assert analyzed() == before
    large = {f"s{n}": CronDeclaration(cron="@daily", job="report") for n in range(BULK_LOAD_ROWS)}
    service.sync(Scope("bulk", "app", "large"), large, actor="t")
    assert analyzed() == {table: count + 1 for table, count in before.items()}
    assert set(before) == {"schedules", "schedule_state"}


def test_a_declaration_may_create_its_row_disabled_and_sync_never_flips_it(
    service: ScheduleService,
) -> None:
    """`enabled: false` (an imported paused entry) is the state a row is created in."""
    manifest = parse_manifest(
        "name: billing\njobs: {report: {target: 'python:handlers:ok'}}\n"
        "crons:\n  paused: {job: report, cron: '@daily', enabled: false}\n"
        "  live: {job: report, cron: '@daily'}\n"
    )
    service.install_app("acme", "production", manifest, actor="deploy")
    rows = {s.name: s for s in service.list_schedules("acme").items}
    assert not rows["paused"].enabled and rows["paused"].next_run is None
    assert rows["live"].enabled and rows["live"].next_run is not None
    service.enable_schedule(PROD, "paused", actor="ops")
    again = service.install_app("acme", "production", manifest, actor="deploy")
    assert not again.plan.writes  # `enabled` is not declared: nothing to update
    assert service.get_schedule(PROD, "paused").enabled
    with pytest.raises(InvalidManifest, match=r"crons.x.enabled: must be true or false"):
        parse_manifest("name: b\ncrons: {x: {cron: '@daily', enabled: 'no'}}\n")
