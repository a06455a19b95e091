"""Each schedule's key set (issue 37, store.key_sets) on SQLite and PostgreSQL: equal to a
recompute from `schedules.labels` after any writes, filled by migration 0027 from rows
that existed, and a page of negative terms walked by it selects what the selector
matches, even when the sets or values it read have changed since.
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.core.selectors import Requirement, Selector, parse_selector
from cronplane.errors import CronplaneError
from cronplane.manifest import manifest_from_data
from cronplane.service import NewSchedule, ScheduleService
from cronplane.store import key_sets, label_index, schedule_filters
from cronplane.store.database import Database
from cronplane.store.schedules import insert_rows, list_all, split_values
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


def test_migration_0027_fills_the_key_sets_of_the_rows_that_exist(
    empty_database: Database,
) -> None:
    database = empty_database
    database.upgrade("0026")
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


def _rows(count: int) -> list[dict[str, Any]]:
    """Rows whose key sets vary: most have a team and a tier, some lack either or both."""
    rows = []
    for n in range(count):
        labels = {
            **({"team": ("pay", "ops", "web")[n % 3]} if n % 7 else {}),
            **({"tier": ("batch", "web", "")[n % 4 % 3]} if n % 5 else {}),
            **({"example.com/env": ""} if n % 4 == 0 else {}),
        }
        stack = ("a", "b")[n % 2]
        row = schedule_row(f"s{n // 2:02d}", stack=stack, enabled=n % 3 != 1, next_run=None)
        rows.append({**row, "labels": labels})
    return rows


@st.composite
def negatives(draw: st.DrawFn) -> Requirement:
    op = draw(st.sampled_from(key_sets.NEGATIVE))
    key = draw(st.sampled_from(KEYS))
    if op == "!":
        return Requirement(key, op)
    values = draw(st.lists(st.sampled_from(("", "batch", "pay", "web")), min_size=1, max_size=3))
    return Requirement(key, op, tuple(sorted(set(values)))[: 1 if op == "!=" else 3])


def _listed(database: Database) -> tuple[ScheduleService, list[dict[str, Any]]]:
    """Forty rows inserted, a service over them, and the rows in the listing's order."""
    rows = _rows(40)
    with database.begin() as conn:
        insert_rows(conn, rows)
    order = sorted(rows, key=lambda r: (r["name"], r["stack"], r["environment"]))
    return ScheduleService(database, FakeClock(START)), order


def _paged(
    service: ScheduleService, selector: Selector, stack: str | None, enabled: bool | None
) -> list[tuple[str, str]]:
    """Every page of two of `selector` (and the filters), followed by its cursor."""
    shown: list[tuple[str, str]] = []
    cursor = None
    for _ in range(40):
        query = ScheduleQuery(
            selector=str(selector), stack=stack, enabled=enabled, limit=2, cursor=cursor
        )
        page = service.list_schedules("acme", query)
        shown += [(row.name, row.stack) for row in page.items]
        cursor = page.next_cursor
        if cursor is None:
            break
    return shown


def _matching(
    order: list[dict[str, Any]], selector: Selector, stack: str | None, enabled: bool | None
) -> list[tuple[str, str]]:
    """What the selector's own matching (and the filters) keeps of `order`."""
    return [
        (r["name"], r["stack"])
        for r in order
        if selector.matches(r["labels"])
        and stack in (None, r["stack"])
        and enabled in (None, r["enabled"])
    ]


def test_negative_selectors_page_through_what_they_match(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of two give exactly the matching rows in the listing's order, with the scope
    and state filters or without, whether the page merges a term's ranges (the walk by
    name never counted as often enough) or, past the caps, walks by name."""
    monkeypatch.setattr(schedule_filters, "_often", lambda *_: False)
    service, order = _listed(database)

    @settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.lists(negatives(), min_size=1, max_size=3),
        st.sampled_from((None, "a")),
        st.sampled_from((None, True)),
        st.sampled_from(((8, 16384), (1, 16384), (8, 2))),
    )
    def check(
        terms: list[Requirement], stack: str | None, enabled: bool | None, caps: tuple[int, int]
    ) -> None:
        monkeypatch.setattr(key_sets, "MAX_BRANCHES", caps[0])
        monkeypatch.setattr(key_sets, "COUNT_CAP", caps[1])
        selector = Selector(tuple(terms))
        shown = _paged(service, selector, stack, enabled)
        assert shown == _matching(order, selector, stack, enabled), str(selector)
        with database.read() as conn:
            whole = list_all(conn, "acme", ScheduleQuery(selector=str(selector), stack=stack))
        assert [(row.name, row.stack) for row in whole] == _matching(order, selector, stack, None)

    check()


@st.composite
def positives(draw: st.DrawFn) -> Requirement:
    op = draw(st.sampled_from(("=", "in", "exists")))
    key = draw(st.sampled_from(KEYS))
    if op == "exists":
        return Requirement(key, op)
    values = draw(st.lists(st.sampled_from(("", "batch", "pay", "ops")), min_size=1, max_size=3))
    return Requirement(key, op, tuple(sorted(set(values)))[: 1 if op == "=" else 3])


def test_mixed_selectors_page_through_what_they_match(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A selector of positive and negative terms pages exactly through the matching rows
    whichever walk it takes: a positive term's range (small or past its cap), or a
    negative term's complement less the sets a positive or a `!k` term refuses."""
    service, order = _listed(database)

    @settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        st.lists(positives(), min_size=1, max_size=2),
        st.lists(negatives(), min_size=1, max_size=2),
        st.sampled_from((None, "a")),
        st.sampled_from((None, True)),
        st.sampled_from(((16384, 16384), (2, 16384), (2, 4))),
    )
    def check(
        wanted: list[Requirement],
        refused: list[Requirement],
        stack: str | None,
        enabled: bool | None,
        caps: tuple[int, int],
    ) -> None:
        monkeypatch.setattr(label_index, "COUNT_CAP", caps[0])
        monkeypatch.setattr(key_sets, "COUNT_CAP", caps[1])
        selector = Selector(tuple(dict.fromkeys(wanted + refused)))
        shown = _paged(service, selector, stack, enabled)
        assert shown == _matching(order, selector, stack, enabled), str(selector)

    check()


def test_a_rare_negative_term_is_walked_instead_of_a_common_positive_one(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`team=pay,!tier` when team=pay is past the positive walk's cap and its first entries
    rarely lack a tier: the page walks the rows of the sets without a tier (and with a
    team), not team=pay's range. Not when the positive walk finds its rows often
    (`!example.com/env`: most rows lack it), nor when the complement is past its cap."""
    rows = _rows(40)
    with database.begin() as conn:
        insert_rows(conn, rows)
    monkeypatch.setattr(label_index, "COUNT_CAP", 2)

    def walks(text: str) -> bool:
        with database.read() as conn:
            query = ScheduleQuery(selector=text)
            return "schedule_key_sets" in str(schedule_filters.listing(conn, "acme", query))

    assert walks("team=pay,!tier")
    assert not walks("team=pay,!example.com/env")
    monkeypatch.setattr(key_sets, "COUNT_CAP", 2)
    assert not walks("team=pay,!tier")


@pytest.mark.parametrize("text", ["!team", "tier!=batch", "tier notin (,batch)"])
def test_a_plan_read_before_new_sets_and_values_still_selects_them(
    database: Database, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """A page's plan (the sets and their keys) is read in a statement before the page's:
    rows written between the two, of a set never seen or with a value never seen, are in
    the page (PostgreSQL's READ COMMITTED lets the second statement see them)."""
    monkeypatch.setattr(schedule_filters, "_often", lambda *_: False)
    selector = parse_selector(text)
    with database.begin() as conn:
        insert_rows(conn, _rows(12))
    with database.read() as conn:
        stale = key_sets.complement(conn, "acme", selector)
    assert stale is not None
    fresh = [
        {"team": "pay", "tier": "gold"},  # a value between the term's
        {"tier": "zinc", "new": ""},  # a set never seen
        {"other": "x"},
        {"tier": "batch"},
    ]
    new_rows = [
        {**schedule_row(f"n{n}", next_run=None), "labels": labels} for n, labels in enumerate(fresh)
    ]
    with database.begin() as conn:
        insert_rows(conn, new_rows)
    monkeypatch.setattr(key_sets, "complement", lambda *_: stale)
    query = ScheduleQuery(selector=text)
    with database.read() as conn:
        shown = [row.name for row in list_all(conn, "acme", query)]
        page = conn.execute(schedule_filters.listing(conn, "acme", query, limit=100)).all()
    expected = sorted(
        (r["name"], r["stack"]) for r in _rows(12) + new_rows if selector.matches(r["labels"])
    )
    assert shown == [name for name, _ in expected]
    assert [row.name for row in page] == shown
