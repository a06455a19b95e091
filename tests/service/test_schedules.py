"""SPEC §2 rules of the schedule service, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from cronplane import events
from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, JobPatch, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import (
    AppOwned,
    CronRejected,
    InvalidName,
    InvalidPayload,
    InvalidRequest,
    InvalidState,
    JobInactive,
    JobNotFound,
    ScheduleExists,
    ScheduleNotFound,
    StaleRevision,
    UnknownZone,
)
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.store.events import list_events
from service_support import START, counts, snapshot

PROD = Scope("acme", "billing", "production")


def test_create_fills_defaults_and_computes_next_run_forward(
    service: ScheduleService, database: Database
) -> None:
    schedule = service.create_schedule(
        PROD, ScheduleSpec(job="report", cron="*/15 * * * *"), actor="ann"
    )
    assert schedule.name == "report" and schedule.source == "user"
    assert schedule.payload == {"kind": "daily"}  # the job's default payload
    assert schedule.last_run == START and schedule.created_at == START
    assert schedule.next_run == datetime(2026, 1, 5, 12, 15, tzinfo=UTC)  # no back-fill to 12:00
    assert schedule.revision == 1 and schedule.overlap == "skip" and schedule.timezone == "UTC"
    assert service.get_schedule(PROD, "report") == schedule
    assert service.get_schedule_by_id("acme", schedule.id) == schedule
    with database.read() as conn:
        (event,) = list_events(conn, tenant="acme", schedule_id=schedule.id)
    assert event.code == events.SCHEDULE_CREATED.text and event.actor == "ann"


def test_create_normalizes_and_resolves_h_with_the_schedule_identity(
    service: ScheduleService,
) -> None:
    a = service.create_schedule(
        PROD,
        ScheduleSpec(job="report", name="a", cron="H H * * *", timezone="Europe/London"),
        actor="t",
    )
    again = service.create_schedule(
        Scope("acme", "billing", "staging"),
        ScheduleSpec(job="report", name="a", cron="H H * * *"),
        actor="t",
    )
    daily = service.create_schedule(
        PROD, ScheduleSpec(job="report", name="d", cron="@daily"), actor="t"
    )
    assert "H" not in a.cron and len(a.cron.split()) == 5
    assert "H" not in again.cron
    assert daily.cron == "0 0 * * *"
    # Deterministic: the same identity resolves to the same minute and hour.
    service.remove_schedule(PROD, "a", actor="t")
    assert (
        service.create_schedule(
            PROD, ScheduleSpec(job="report", name="a", cron="H H * * *"), actor="t"
        ).cron
        == a.cron
    )


@pytest.mark.parametrize(
    ("spec", "error", "fragment"),
    [
        (ScheduleSpec(job="report", cron="61 * * * *"), CronRejected, "61 * * * *"),
        (ScheduleSpec(job="report", cron="0 0 30 2 *"), CronRejected, "0 0 30 2"),
        (ScheduleSpec(job="report", cron="@hourly", timezone="Mars/Base"), UnknownZone, "Mars"),
        (ScheduleSpec(job="report", cron="@hourly", name="bad name"), InvalidName, "bad name"),
        (ScheduleSpec(job="report", cron="@hourly", name="x" * 65), InvalidName, "xxx"),
        (ScheduleSpec(job="nope", cron="@hourly"), JobNotFound, "nope"),
        (
            ScheduleSpec(job="typed", cron="@hourly", payload={"batch": "x"}),
            InvalidPayload,
            "batch",
        ),
        (ScheduleSpec(job="report", cron="@hourly", payload=[1]), InvalidPayload, "object"),  # type: ignore[arg-type]
        (
            ScheduleSpec(job="report", cron="@hourly", payload={"x": "y" * 70_000}),
            InvalidPayload,
            "limit",
        ),
        (ScheduleSpec(job="report", cron="@hourly", misfire_grace=-1), InvalidRequest, "misfire"),
        (ScheduleSpec(job="report", cron="@hourly", overlap="many"), InvalidRequest, "overlap"),  # type: ignore[arg-type]
    ],
)
def test_create_refuses_with_a_coded_error_and_writes_nothing(
    service: ScheduleService,
    database: Database,
    spec: ScheduleSpec,
    error: type[Exception],
    fragment: str,
) -> None:
    before = counts(database)
    with pytest.raises(error, match=fragment.replace("*", r"\*")):
        service.create_schedule(PROD, spec, actor="t")
    assert counts(database) == before


def test_a_cron_that_does_not_fire_within_five_years_is_refused(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    # 2100 is not a leap year: after 2096-03-01 the next 29 February is in 2104.
    clock.set(datetime(2096, 3, 1, tzinfo=UTC))
    before = counts(database)
    with pytest.raises(CronRejected, match=r"0 0 29 2 \*.*five years"):
        service.create_schedule(PROD, ScheduleSpec(job="report", cron="0 0 29 2 *"), actor="t")
    assert counts(database) == before
    clock.set(datetime(2027, 3, 1, tzinfo=UTC))
    created = service.create_schedule(
        PROD, ScheduleSpec(job="report", cron="0 0 29 2 *"), actor="t"
    )
    assert created.next_run == datetime(2028, 2, 29, tzinfo=UTC)


def test_deep_payload_and_inactive_job_are_refused(
    service: ScheduleService, database: Database
) -> None:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(40):
        node["a"] = {}
        node = node["a"]  # type: ignore[assignment]
    with pytest.raises(InvalidPayload, match="deeper"):
        service.create_schedule(
            PROD, ScheduleSpec(job="report", cron="@hourly", payload=deep), actor="t"
        )
    service.deactivate_job("acme", "billing", "report", actor="t")
    before = counts(database)
    with pytest.raises(JobInactive):
        service.create_schedule(PROD, ScheduleSpec(job="report", cron="@hourly"), actor="t")
    assert counts(database) == before


def test_a_duplicate_key_is_schedule_exists(service: ScheduleService, database: Database) -> None:
    service.create_schedule(PROD, ScheduleSpec(job="report", cron="@hourly"), actor="t")
    before = snapshot(database), counts(database)
    with pytest.raises(ScheduleExists):
        service.create_schedule(PROD, ScheduleSpec(job="report", cron="@daily"), actor="t")
    assert (snapshot(database), counts(database)) == before


def test_disable_clears_next_run_and_enable_never_back_fills(
    service: ScheduleService, clock: FakeClock
) -> None:
    service.create_schedule(PROD, ScheduleSpec(job="report", cron="0 * * * *"), actor="t")
    off = service.disable_schedule(PROD, "report", actor="bob")
    assert not off.enabled and off.next_run is None and off.revision == 2
    clock.advance(hours=5, minutes=10)  # five occurrences missed while disabled
    on = service.enable_schedule(PROD, "report", actor="bob")
    assert on.enabled and on.revision == 3
    assert on.next_run == datetime(2026, 1, 5, 18, 0, tzinfo=UTC)
    # Enabling an enabled row changes nothing.
    assert service.enable_schedule(PROD, "report", actor="bob") == on
    history = service.schedule_history(PROD, "report")
    assert [e.code for e in history] == [
        events.SCHEDULE_ENABLED.text,
        events.SCHEDULE_DISABLED.text,
        events.SCHEDULE_CREATED.text,
    ]
    assert {e.actor for e in history[:2]} == {"bob"}


def test_a_disabled_create_has_no_next_run(service: ScheduleService) -> None:
    s = service.create_schedule(
        PROD, ScheduleSpec(job="report", cron="@hourly", enabled=False), actor="t"
    )
    assert s.next_run is None and s.last_run == START


def test_update_bumps_revision_and_a_stale_revision_is_refused(
    service: ScheduleService, database: Database, clock: FakeClock
) -> None:
    service.create_schedule(PROD, ScheduleSpec(job="typed", cron="@hourly"), actor="t")
    clock.advance(minutes=1)
    updated = service.update_schedule(
        PROD,
        "typed",
        SchedulePatch(
            cron="30 2 * * *", timezone="Europe/Paris", payload={"batch": 5}, misfire_grace=60
        ),
        actor="t",
        revision=1,
    )
    assert (
        updated.revision == 2 and updated.cron == "30 2 * * *" and updated.payload == {"batch": 5}
    )
    assert updated.next_run == datetime(2026, 1, 6, 1, 30, tzinfo=UTC)
    assert updated.updated_at == clock.now() and updated.overrides == ()
    assert service.get_schedule(PROD, "typed") == updated
    before = snapshot(database), counts(database)
    with pytest.raises(StaleRevision):
        service.update_schedule(PROD, "typed", SchedulePatch(cron="@daily"), actor="t", revision=1)
    with pytest.raises(InvalidPayload):
        service.update_schedule(PROD, "typed", SchedulePatch(payload={"batch": "x"}), actor="t")
    with pytest.raises(CronRejected):
        service.update_schedule(PROD, "typed", SchedulePatch(cron="every 0 minutes"), actor="t")
    # A patch that changes nothing writes nothing.
    assert (
        service.update_schedule(PROD, "typed", SchedulePatch(misfire_grace=60), actor="t")
        == updated
    )
    assert (snapshot(database), counts(database)) == before


def test_remove_and_not_found(service: ScheduleService, database: Database) -> None:
    service.create_schedule(PROD, ScheduleSpec(job="report", cron="@hourly"), actor="t")
    with pytest.raises(StaleRevision):
        service.remove_schedule(PROD, "report", actor="t", revision=7)
    removed = service.remove_schedule(PROD, "report", actor="t", revision=1)
    assert counts(database)[0] == 0
    with database.read() as conn:
        codes = [e.code for e in list_events(conn, tenant="acme", schedule_id=removed.id)]
    assert codes[0] == events.SCHEDULE_REMOVED.text
    for call in (
        lambda: service.get_schedule(PROD, "report"),
        lambda: service.remove_schedule(PROD, "report", actor="t"),
        lambda: service.enable_schedule(PROD, "report", actor="t"),
    ):
        with pytest.raises(ScheduleNotFound):
            call()


def test_app_rows_remember_overrides_refuse_removal_and_reset(
    service: ScheduleService, database: Database
) -> None:
    service.sync(PROD, {"nightly": CronDeclaration(cron="at 02:30", job="report")}, actor="app")
    row = service.get_schedule(PROD, "nightly")
    assert row.source == "app" and row.overrides == ()
    with pytest.raises(AppOwned):
        service.remove_schedule(PROD, "nightly", actor="ops")
    with pytest.raises(AppOwned, match="job"):
        service.update_schedule(PROD, "nightly", SchedulePatch(job="typed"), actor="ops")
    with pytest.raises(AppOwned, match="overlap"):
        service.update_schedule(PROD, "nightly", SchedulePatch(overlap="allow"), actor="ops")
    edited = service.update_schedule(
        PROD, "nightly", SchedulePatch(cron="at 03:00", payload={"kind": "x"}), actor="ops"
    )
    assert edited.overrides == ("cron", "payload") and edited.cron == "0 3 * * *"
    disabled = service.disable_schedule(PROD, "nightly", actor="ops")
    assert disabled.overrides == ("cron", "payload")  # enabled is not an override
    reset = service.reset_to_manifest(PROD, "nightly", actor="ops")
    assert (
        reset.overrides == () and reset.cron == "30 2 * * *" and reset.payload == {"kind": "daily"}
    )
    assert not reset.enabled and reset.next_run is None  # reset leaves enabled alone, like sync
    assert reset.revision == disabled.revision + 1
    assert service.reset_to_manifest(PROD, "nightly", actor="ops") == reset  # nothing to reset
    assert service.get_schedule(PROD, "nightly") == reset
    assert service.schedule_history(PROD, "nightly", limit=1)[0].code == events.SCHEDULE_RESET.text
    service.create_schedule(PROD, ScheduleSpec(job="report", cron="@hourly"), actor="t")
    with pytest.raises(InvalidState):
        service.reset_to_manifest(PROD, "report", actor="ops")


def test_list_filters_and_pages(service: ScheduleService) -> None:
    staging = Scope("acme", "billing", "staging")
    for i in range(7):
        service.create_schedule(
            PROD, ScheduleSpec(job="report", name=f"r{i}", cron="@hourly"), actor="t"
        )
        service.create_schedule(
            staging, ScheduleSpec(job="typed", name=f"r{i}", cron="@daily"), actor="t"
        )
    service.disable_schedule(PROD, "r3", actor="t")
    names: list[tuple[str, str]] = []
    cursor = None
    while True:
        page = service.list_schedules("acme", ScheduleQuery(cursor=cursor, limit=4))
        names += [(s.name, s.environment) for s in page.items]
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert names == sorted(names) and len(names) == 14
    scoped = service.list_schedules(
        "acme", ScheduleQuery(stack="billing", environment="production", limit=3)
    )
    assert [s.name for s in scoped.items] == ["r0", "r1", "r2"]
    nxt = service.list_schedules(
        "acme",
        ScheduleQuery(
            stack="billing", environment="production", limit=3, cursor=scoped.next_cursor
        ),
    )
    assert [s.name for s in nxt.items] == ["r3", "r4", "r5"]
    assert [s.name for s in service.list_schedules("acme", ScheduleQuery(enabled=False)).items] == [
        "r3"
    ]

    assert len(service.list_schedules("acme", ScheduleQuery(job="typed")).items) == 7
    assert len(service.list_schedules("acme", ScheduleQuery(source="user")).items) == 14
    assert service.list_schedules("other").items == ()
    for bad in (
        lambda: service.list_schedules("acme", ScheduleQuery(limit=0)),
        lambda: service.list_schedules("acme", ScheduleQuery(cursor="%%%")),
        lambda: service.list_schedules("acme", ScheduleQuery(source="nobody")),
    ):
        with pytest.raises(InvalidRequest):
            bad()


def test_list_searches_name_job_stack_and_environment_case_insensitively(
    service: ScheduleService,
) -> None:
    staging = Scope("acme", "billing", "staging")
    for name in ("Invoice-Sweep", "invoice_daily", "nightly"):
        service.create_schedule(
            PROD, ScheduleSpec(job="report", name=name, cron="@hourly"), actor="t"
        )
    service.create_schedule(
        staging, ScheduleSpec(job="typed", name="other", cron="@daily"), actor="t"
    )

    def found(search: str, limit: int = 100) -> list[str]:
        names: list[str] = []
        cursor = None
        while True:
            page = service.list_schedules(
                "acme", ScheduleQuery(search=search, cursor=cursor, limit=limit)
            )
            names += [s.name for s in page.items]
            if page.next_cursor is None:
                return names
            cursor = page.next_cursor

    # Sets: how mixed-case names order depends on the database's collation.
    assert set(found("INVOICE")) == {"Invoice-Sweep", "invoice_daily"}
    paged = found("invoice", limit=1)  # one match a page: paging stays exact
    assert len(paged) == 2 and set(paged) == {"Invoice-Sweep", "invoice_daily"}
    assert found("typed") == ["other"]  # the job
    assert found("stag") == ["other"]  # the environment
    # LIKE wildcards are taken literally.
    assert found("%") == [] and found("_") == ["invoice_daily"]
    assert found("nomatch") == []
    with pytest.raises(InvalidRequest):
        service.list_schedules("acme", ScheduleQuery(search="x" * 129))


def test_record_run_moves_last_and_next_run(service: ScheduleService, clock: FakeClock) -> None:
    created = service.create_schedule(PROD, ScheduleSpec(job="report", cron="0 * * * *"), actor="t")
    clock.advance(hours=2)
    ran = service.record_run(PROD, "report", actor="worker")
    assert ran.last_run == clock.now() and ran.next_run == clock.now().replace(
        minute=0, second=0
    ) + timedelta(hours=1)
    assert ran.revision == created.revision  # bookkeeping, not a definition change
    assert service.get_schedule(PROD, "report") == ran


def test_every_schedule_write_calls_on_change_after_commit(
    database: Database, clock: FakeClock, service: ScheduleService
) -> None:
    calls: list[int] = []
    svc = ScheduleService(database, clock, on_change=lambda: calls.append(1))
    svc.create_schedule(PROD, ScheduleSpec(job="report", cron="@hourly"), actor="t")
    svc.disable_schedule(PROD, "report", actor="t")
    svc.disable_schedule(PROD, "report", actor="t")  # no change, no wake-up
    svc.update_schedule(PROD, "report", SchedulePatch(cron="@daily"), actor="t")
    svc.remove_schedule(PROD, "report", actor="t")
    with pytest.raises(ScheduleNotFound):
        svc.remove_schedule(PROD, "report", actor="t")
    assert len(calls) == 4


def test_schedule_writes_notify_postgres_listeners(
    pg_database: Database, clock: FakeClock, pg_session_direct_url: str
) -> None:
    import psycopg

    service = ScheduleService(pg_database, clock)
    service.register_job("acme", "billing", JobSpecFactory.report(), actor="t")
    # Listening takes a direct connection (through PgBouncer a LISTEN hears nothing).
    url = pg_session_direct_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(url, autocommit=True) as listener:
        listener.execute("LISTEN cronplane_schedules")
        service.create_schedule(PROD, ScheduleSpec(job="report", cron="@hourly"), actor="t")
        received = list(listener.notifies(timeout=5, stop_after=1))
    assert [n.channel for n in received] == ["cronplane_schedules"]


class JobSpecFactory:
    @staticmethod
    def report():  # type: ignore[no-untyped-def]
        from cronplane.core.inputs import JobSpec

        return JobSpec(name="report", target="python:billing.jobs:report")


def test_jobs_register_update_deactivate(service: ScheduleService, database: Database) -> None:
    from cronplane.core.inputs import JobSpec
    from cronplane.errors import InvalidTarget, JobExists

    assert [j.name for j in service.list_jobs("acme", "billing")] == ["report", "typed"]
    job = service.get_job("acme", "billing", "report")
    assert job.kind == "python" and job.active and job.source == "user"
    with pytest.raises(JobExists):
        service.register_job(
            "acme", "billing", JobSpec(name="report", target="celery:x.y"), actor="t"
        )
    with pytest.raises(InvalidTarget):
        service.register_job("acme", "billing", JobSpec(name="x", target="ftp:nope"), actor="t")
    with pytest.raises(InvalidPayload):
        service.register_job(
            "acme",
            "billing",
            JobSpec(
                name="x",
                target="celery:t",
                payload={"a": 1},
                payload_schema={"type": "object", "additionalProperties": False},
            ),
            actor="t",
        )
    updated = service.update_job(
        "acme", "billing", "report", JobPatch(title="Reports"), actor="t", revision=1
    )
    assert updated.title == "Reports" and updated.revision == 2
    with pytest.raises(StaleRevision):
        service.update_job("acme", "billing", "report", JobPatch(title="R"), actor="t", revision=1)
    off = service.deactivate_job("acme", "billing", "report", actor="t")
    assert off.status == "inactive"
    assert [j.name for j in service.list_jobs("acme", status="active")] == ["typed"]
    with pytest.raises(JobNotFound):
        service.get_job("acme", "other", "report")
