"""The label index (issue 37) on SQLite and PostgreSQL: kept in step with
`schedules.labels` by every path that writes labels, filled by migration 0018 from
rows that existed, and a selector answered from it selects what `Selector.matches`
selects.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.core.selectors import OPS, Requirement, Selector
from cronplane.manifest import manifest_from_data
from cronplane.service import ScheduleService
from cronplane.store import label_index
from cronplane.store.database import Database
from cronplane.store.schedules import insert_rows, split_values
from cronplane.store.tables import schedule_labels, schedule_state, schedules
from firing_support import schedule_row

START = datetime(2026, 1, 5, 12, 0, 30, tzinfo=UTC)
HERE = Scope("acme", "billing", "prod")


def _index(database: Database) -> set[tuple[str, str, str, str]]:
    with database.read() as conn:
        rows = conn.execute(
            select(
                schedule_labels.c.schedule_id,
                schedule_labels.c.tenant,
                schedule_labels.c.key,
                schedule_labels.c.value,
            )
        )
        return {(str(r.schedule_id), r.tenant, r.key, r.value) for r in rows}


def _column(database: Database) -> set[tuple[str, str, str, str]]:
    with database.read() as conn:
        rows = conn.execute(select(schedules.c.id, schedules.c.tenant, schedules.c.labels))
        return {(str(r.id), r.tenant, key, value) for r in rows for key, value in r.labels.items()}


def _in_step(database: Database, step: str) -> int:
    index = _index(database)
    assert index == _column(database), step
    return len(index)


def _manifest(crons: dict[str, object], labels: dict[str, str]) -> object:
    return manifest_from_data(
        {
            "name": "payments",
            "labels": labels,
            "jobs": {"settle": {"target": "python:billing.jobs:settle"}},
            "crons": crons,
        }
    )


def test_every_write_path_keeps_the_index_in_step(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START))
    service.register_job(
        "acme", "billing", JobSpec(name="report", target="python:billing.jobs:report"), actor="t"
    )
    spec = ScheduleSpec(job="report", cron="0 2 * * *", name="a", labels={"team": "pay"})
    service.create_schedule(HERE, spec, actor="t")
    service.create_schedule(HERE, ScheduleSpec(job="report", cron="0 3 * * *", name="b"), actor="t")
    assert _in_step(database, "create") == 1
    patch = SchedulePatch(labels={"team": "ops", "tier": "web"})
    service.update_schedule(HERE, "a", patch, actor="t")
    service.update_schedule(HERE, "b", SchedulePatch(labels={"env": "prod"}), actor="t")
    assert _in_step(database, "update") == 3
    service.update_schedule(HERE, "a", SchedulePatch(cron="0 4 * * *"), actor="t")
    assert _in_step(database, "an update of another field") == 3
    service.remove_schedule(HERE, "a", actor="t")
    assert _in_step(database, "remove") == 1

    crons: dict[str, object] = {
        "settle": {"cron": "0 2 * * *", "labels": {"tier": "critical"}},
        "sweep": {"cron": "0 3 * * *", "job": "settle"},
    }
    service.install_app("acme", "prod", _manifest(crons, {"team": "pay"}), actor="t")  # type: ignore[arg-type]
    assert _in_step(database, "sync: create") == 1 + 2 + 1
    crons["sweep"] = {"cron": "0 3 * * *", "job": "settle", "labels": {"region": "eu"}}
    service.install_app("acme", "prod", _manifest(crons, {"team": "ops"}), actor="t")  # type: ignore[arg-type]
    assert _in_step(database, "sync: update") == 1 + 2 + 2
    app = Scope("acme", "payments", "prod")
    service.update_schedule(app, "settle", SchedulePatch(labels={"frozen": "yes"}), actor="t")
    assert _in_step(database, "an operator's override") == 1 + 1 + 2
    service.reset_to_manifest(app, "settle", actor="t")
    assert _in_step(database, "reset to the manifest") == 1 + 2 + 2
    del crons["sweep"]
    service.install_app("acme", "prod", _manifest(crons, {"team": "ops"}), actor="t")  # type: ignore[arg-type]
    assert _in_step(database, "sync: remove") == 1 + 2
    service.uninstall_app(app, actor="t")
    assert _in_step(database, "uninstall") == 1

    with database.begin() as conn:
        insert_rows(conn, [{**schedule_row("direct", next_run=None), "labels": {"k": "v"}}])
    assert _in_step(database, "insert_rows") == 2


def test_migration_0018_indexes_the_rows_that_exist(empty_database: Database) -> None:
    database = empty_database
    database.upgrade("0017")
    row = {**schedule_row("old", next_run=None), "labels": {"team": "pay", "tier": ""}}
    main, state = split_values(row)
    with database.begin() as conn:
        conn.execute(schedules.insert(), [main])
        conn.execute(schedule_state.insert(), [{"id": row["id"], "tenant": "acme", **state}])
    database.upgrade()
    assert _index(database) == {
        (str(row["id"]), "acme", "team", "pay"),
        (str(row["id"]), "acme", "tier", ""),
    }
    assert _in_step(database, "migration 0018") == 2
    with database.read() as conn:
        walked = conn.execute(select(schedule_labels.c.name, schedule_labels.c.stack)).all()
    assert {tuple(r) for r in walked} == {("old", "default")}


KEYS = ("team", "tier", "example.com/env")
VALUES = ("", "pay", "ops", "web")
label_maps = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    op = draw(st.sampled_from(OPS))
    key = draw(st.sampled_from(KEYS))
    if op in ("exists", "!"):
        return Requirement(key, op)
    if op in ("=", "!="):
        return Requirement(key, op, (draw(st.sampled_from(VALUES)),))
    chosen = draw(st.lists(st.sampled_from(VALUES), min_size=1, max_size=3))
    return Requirement(key, op, tuple(sorted(set(chosen))))


def test_the_database_selects_what_the_selector_matches(database: Database) -> None:
    rows = [
        {**schedule_row(f"s{n:02d}", tenant=tenant, next_run=None), "labels": labels}
        for n, (tenant, labels) in enumerate(
            (tenant, labels)
            for tenant in ("acme", "globex")
            for labels in (
                {},
                {"team": "pay"},
                {"team": "ops", "tier": ""},
                {"team": "pay", "tier": "web", "example.com/env": "ops"},
                {"tier": "pay"},
                {"example.com/env": ""},
            )
        )
    ]
    with database.begin() as conn:
        insert_rows(conn, rows)
    service = ScheduleService(database, FakeClock(START))

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(requirements(), max_size=3))
    def check(terms: list[Requirement]) -> None:
        selector = Selector(tuple(terms))
        query = ScheduleQuery(selector=str(selector), limit=100)
        found = {row.name for row in service.list_schedules("acme", query).items}
        expected = {
            r["name"] for r in rows if r["tenant"] == "acme" and selector.matches(r["labels"])
        }
        assert found == expected, str(selector)

    check()


def test_search_reads_the_cron_the_job_title_and_label_values(database: Database) -> None:
    service = ScheduleService(database, FakeClock(START))
    job = JobSpec(name="report", title="Old Export to S3", target="python:billing.jobs:report")
    service.register_job("acme", "billing", job, actor="t")
    for name, cron, labels in (
        ("a", "0 2 * * *", {"team": "Payments"}),
        ("b", "*/7 * * * *", {}),
    ):
        service.create_schedule(
            HERE, ScheduleSpec(job="report", cron=cron, name=name, labels=labels), actor="t"
        )

    def names(text: str) -> list[str]:
        return [
            row.name for row in service.list_schedules("acme", ScheduleQuery(search=text)).items
        ]

    assert names("payMENTS") == ["a"]
    assert names("*/7") == ["b"]
    assert names("export to") == ["a", "b"]
    assert names("100%") == []


def test_every_walk_pages_through_what_the_selector_matches(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two, cursor after cursor, give exactly the matching rows in the listing's
    order, whichever range a page walks: with the count cap at 3, most terms reach it,
    so common terms are chosen by sample, an `in` is walked one value at a time and
    merged, and a key-only term of one value is walked in order."""
    monkeypatch.setattr(label_index, "COUNT_CAP", 3)
    monkeypatch.setattr(label_index, "SAMPLE", 4)
    rows = []
    for n in range(36):
        labels = {
            "team": ("pay", "ops", "web")[n % 3],
            **({"tier": ("pay", "web")[n % 2]} if n % 5 else {}),
            **({"example.com/env": ""} if n % 4 == 0 else {}),
        }
        # Names repeat across stacks: the keyset's ties (name, then stack).
        stack = ("a", "b")[n % 2]
        rows.append(
            {**schedule_row(f"s{n // 2:02d}", stack=stack, next_run=None), "labels": labels}
        )
    with database.begin() as conn:
        insert_rows(conn, rows)
    service = ScheduleService(database, FakeClock(START))
    order = sorted(rows, key=lambda r: (r["name"], r["stack"], r["environment"]))

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.lists(requirements(), max_size=3))
    def check(terms: list[Requirement]) -> None:
        selector = Selector(tuple(terms))
        shown: list[tuple[str, str]] = []
        cursor = None
        for _ in range(40):
            query = ScheduleQuery(selector=str(selector), limit=2, cursor=cursor)
            page = service.list_schedules("acme", query)
            shown += [(row.name, row.stack) for row in page.items]
            cursor = page.next_cursor
            if cursor is None:
                break
        expected = [(r["name"], r["stack"]) for r in order if selector.matches(r["labels"])]
        assert shown == expected, str(selector)

    check()
