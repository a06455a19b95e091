"""Each schedule's key set (issue 37, store.key_sets) on SQLite and PostgreSQL: equal to a
recompute from `schedules.labels` after any writes, and filled by migration 0026 from rows
that existed.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import CronplaneError
from cronplane.manifest import manifest_from_data
from cronplane.service import NewSchedule, ScheduleService
from cronplane.store import key_sets
from cronplane.store.database import Database
from cronplane.store.schedules import insert_rows, split_values
from cronplane.store.tables import label_key_sets, schedule_key_sets, schedule_state, schedules
from firing_support import schedule_row

START = datetime(2026, 1, 5, 12, 0, 30, tzinfo=UTC)
HERE = Scope("acme", "billing", "prod")
APP = Scope("acme", "payments", "prod")
KEYS = ("team", "tier", "example.com/env")
label_maps = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(("", "pay", "ops")), max_size=3)
names = st.sampled_from(("a", "b", "c", "d"))


def _recomputed(database: Database) -> None:
    """The stored key sets are what the labels give, and each is listed with its keys."""
    with database.read() as conn:
        columns = (schedules.c.id, schedules.c.tenant, schedules.c.name, schedules.c.stack)
        rows = conn.execute(select(*columns, schedules.c.environment, schedules.c.labels)).all()
        stored = conn.execute(
            select(
                schedule_key_sets.c.schedule_id,
                schedule_key_sets.c.tenant,
                schedule_key_sets.c.key_set,
                schedule_key_sets.c.name,
                schedule_key_sets.c.stack,
                schedule_key_sets.c.environment,
            )
        ).all()
        listed = {(r.tenant, r.key_set): r.key_list for r in conn.execute(select(label_key_sets))}
    expected = {
        (r.id, r.tenant, key_sets.digest(r.labels)[0], r.name, r.stack, r.environment) for r in rows
    }
    assert {tuple(r) for r in stored} == expected
    assert len(stored) == len(rows)
    for r in rows:
        assert listed[r.tenant, key_sets.digest(r.labels)[0]] == key_sets.digest(r.labels)[1]


def _manifest(crons: dict[str, dict[str, str]], labels: dict[str, str]) -> Any:
    return manifest_from_data(
        {
            "name": "payments",
            "labels": labels,
            "jobs": {"settle": {"target": "python:billing.jobs:settle"}},
            "crons": {
                name: {"cron": "0 2 * * *", "job": "settle", "labels": own}
                for name, own in crons.items()
            },
        }
    )


operations = st.one_of(
    st.tuples(st.just("create"), names, label_maps),
    st.tuples(st.just("bulk"), st.lists(st.tuples(names, label_maps), max_size=3)),
    st.tuples(st.just("update"), names, label_maps),
    st.tuples(st.just("remove"), names),
    st.tuples(st.just("restore"), names),
    st.tuples(st.just("rollback"), names),
    st.tuples(st.just("sync"), st.dictionaries(names, label_maps, max_size=3), label_maps),
    st.tuples(st.just("uninstall")),
    st.tuples(st.just("insert_rows"), names, label_maps),
)


def _apply(service: ScheduleService, database: Database, operation: tuple[Any, ...]) -> None:
    kind, *args = operation
    spec = lambda name, labels: ScheduleSpec(  # noqa: E731
        job="report", cron="0 2 * * *", name=name, labels=labels
    )
    if kind == "create":
        service.create_schedule(HERE, spec(*args), actor="t")
    elif kind == "bulk":
        service.create_schedules([NewSchedule(HERE, spec(*each), "t") for each in args[0]])
    elif kind == "update":
        service.update_schedule(HERE, args[0], SchedulePatch(labels=args[1]), actor="t")
    elif kind == "remove":
        service.remove_schedule(HERE, args[0], actor="t")
    elif kind == "restore":
        service.restore_schedule(HERE, args[0], actor="t")
    elif kind == "rollback":
        service.rollback_schedule(HERE, args[0], to=1, actor="t")
    elif kind == "sync":
        service.install_app("acme", "prod", _manifest(*args), actor="t")
    elif kind == "uninstall":
        service.uninstall_app(APP, actor="t")
    else:
        row = {**schedule_row(args[0], tenant="globex", next_run=None), "labels": args[1]}
        with database.begin() as conn:
            if conn.execute(select(schedules.c.id).where(schedules.c.name == args[0])).first():
                return
            insert_rows(conn, [row])


def test_key_sets_equal_a_recompute_after_any_writes(database: Database) -> None:
    """Creates (one and many), label edits, removes, restores, rollbacks, syncs (an app's
    labels over its crons'), uninstalls and direct inserts, in any order."""
    service = ScheduleService(database, FakeClock(START))
    service.register_job(
        "acme", "billing", JobSpec(name="report", target="python:billing.jobs:report"), actor="t"
    )

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(operations, min_size=1, max_size=8))
    def check(steps: list[tuple[Any, ...]]) -> None:
        for step in steps:
            # A name taken, gone or never removed: what the path answers.
            with contextlib.suppress(CronplaneError):
                _apply(service, database, step)
            _recomputed(database)

    check()


def test_migration_0026_fills_the_key_sets_of_the_rows_that_exist(
    empty_database: Database,
) -> None:
    database = empty_database
    database.upgrade("0025")
    labelled = (
        {"team": "pay", "tier": ""},
        {"tier": "web", "team": "ops"},  # the same set, written in another order
        {},
        {"example.com/env": "prod"},
    )
    with database.begin() as conn:
        for n, (tenant, labels) in enumerate(
            (tenant, labels) for tenant in ("acme", "globex") for labels in labelled
        ):
            row = {**schedule_row(f"s{n}", tenant=tenant, next_run=None), "labels": labels}
            main, state = split_values(row)
            conn.execute(schedules.insert(), [main])
            conn.execute(schedule_state.insert(), [{"id": row["id"], "tenant": tenant, **state}])
    database.upgrade()
    _recomputed(database)
    with database.read() as conn:
        assert len(conn.execute(select(label_key_sets)).all()) == 2 * 3
