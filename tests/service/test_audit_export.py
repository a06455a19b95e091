"""The audit export (issue 38; service.audit.AuditLog.export), on SQLite and PostgreSQL.

Oldest first in id order, the window by `at`, every code in one kind, the
job of an item's events, credentials masked, the young events left for the
next export, coded refusals, and, property-tested over random event
sequences recorded a little out of time order: an export stopped after any
page and resumed `after` its last record gives exactly the rest.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.clock import FakeClock
from cronplane.codes import REGISTRY
from cronplane.core.audit import KINDS, AuditRecord
from cronplane.core.inputs import ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import InvalidAuditQuery
from cronplane.events import AUDIT_KINDS
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.store.events import append_events, event_values
from service_support import START

SCOPE = Scope("acme", "billing", "prod")
EVENT_CODES = sorted(text for text, code in REGISTRY.items() if code.kind == "event")
_tenants = itertools.count()


def _all(service: ScheduleService, tenant: str = "acme", **query: Any) -> list[AuditRecord]:
    """Every record ready now, page by page (`limit` per page)."""
    found: list[AuditRecord] = []
    after = query.pop("after", None)
    while True:
        page = service.audit.export(tenant, after=after, **query)
        found += page.records
        if page.next is None:
            return found
        after = page.next


def test_every_event_code_is_in_exactly_one_kind() -> None:
    assert sorted(AUDIT_KINDS) == EVENT_CODES
    assert set(AUDIT_KINDS.values()) == set(KINDS)


def test_changes_and_runs_oldest_first_with_their_jobs(
    service: ScheduleService, clock: FakeClock
) -> None:
    service.create_schedule(
        SCOPE, ScheduleSpec(job="report", cron="0 2 * * *", name="nightly"), actor="ann"
    )
    clock.advance(60)
    service.pause_schedule(SCOPE, "nightly", actor="bob", note="freeze")
    item = service.run_now(SCOPE, "nightly", actor="cat")
    clock.advance(60)

    records = _all(service, since=START.isoformat(), limit=2)
    assert [r.id for r in records] == sorted(r.id for r in records)
    assert [r.code for r in records] == [
        "V201008JOBREG",
        "V201008JOBREG",
        "V201001SCHCRT",
        "V200101SCHPAU",
        "V202007SCHRUN",
    ]
    assert [r.kind for r in records] == ["changes"] * 4 + ["runs"]
    assert [r.job for r in records[:2]] == ["report", "typed"]  # a job event names its job
    ran = records[-1]
    assert (ran.item_id, ran.job, ran.actor) == (item.id, "report", "cat")
    assert ran.schedule_name == "nightly" and ran.tenant == "acme"
    assert records[3].actor == "bob" and records[3].detail["note"] == "freeze"
    assert [r.code for r in _all(service, since="2026-01-05", kind="runs")] == ["V202007SCHRUN"]
    assert len(_all(service, since="2026-01-05", kind="changes")) == 4
    assert _all(service, since="2026-01-05", kind="alerts") == []
    assert _all(service, tenant="globex", since="2026-01-05") == []


def test_the_window_is_by_time_and_until_is_exclusive(
    service: ScheduleService, clock: FakeClock
) -> None:
    created = START + timedelta(hours=1)
    clock.set(created)
    service.create_schedule(
        SCOPE, ScheduleSpec(job="report", cron="0 2 * * *", name="nightly"), actor="ann"
    )
    clock.set(START + timedelta(hours=2))
    service.disable_schedule(SCOPE, "nightly", actor="ann")
    clock.set(START + timedelta(days=1))

    def codes(**query: Any) -> list[str]:
        return [r.code for r in _all(service, **query)]

    assert codes(since=created.isoformat()) == ["V201001SCHCRT", "V200005SCHDIS"]
    assert codes(since=created.isoformat(), until="2026-01-05T14:00:00Z") == ["V201001SCHCRT"]
    assert codes(until=created.isoformat()) == ["V201008JOBREG", "V201008JOBREG"]
    # Durations ago, from the clock: 22.5 hours back is after the create, 21 after the disable.
    assert codes(since="1350m", until="21h") == ["V200005SCHDIS"]
    assert codes(since="1350m", until="22h") == []  # until is exclusive: 22h ago is the disable
    assert codes(since="2026-01-06") == []


def test_a_page_stops_before_a_young_event(service: ScheduleService, clock: FakeClock) -> None:
    clock.advance(10)
    first = _all(service, since="2026-01-05")
    assert len(first) == 2
    service.create_schedule(
        SCOPE, ScheduleSpec(job="report", cron="0 2 * * *", name="nightly"), actor="ann"
    )
    page = service.audit.export("acme", after=first[-1].id)
    assert (page.records, page.next) == ((), None)  # younger than SETTLE: not yet
    clock.advance(3)
    page = service.audit.export("acme", after=first[-1].id)
    assert [r.code for r in page.records] == ["V201001SCHCRT"] and page.next is None


def test_credentials_in_messages_and_details_are_masked(
    service: ScheduleService, clock: FakeClock, database: Database
) -> None:
    url = "https://hooks.example.com/x?token=s3cret"
    with database.begin() as conn:
        append_events(
            conn,
            [
                event_values(
                    REGISTRY["X200031ITMFAI"],
                    tenant="acme",
                    actor="worker",
                    message=f"POST {url} failed",
                    now=START,
                    detail={"url": url},
                )
            ],
        )
    clock.advance(10)
    [failed] = _all(service, since="2026-01-05", kind="runs")
    assert "s3cret" not in failed.message and "s3cret" not in str(failed.detail)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-13-01"}, "since"),
        ({"until": "9999999w"}, "until"),
        ({"since": "2026-01-05", "until": "2026-01-05"}, "until"),
        ({"since": "2026-01-05", "until": "2026-01-04"}, "until"),
        ({"kind": "everything"}, "kind"),
        ({"limit": 0}, "limit"),
        ({"limit": 1001}, "limit"),
        ({"after": -1}, "after"),
    ],
)
def test_bad_input_is_refused_with_its_field(
    service: ScheduleService, query: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidAuditQuery) as refused:
        service.audit.export("acme", **query)
    assert refused.value.code.text == "X400382AUDINV"
    assert refused.value.detail["field"] == field


# -- resuming: property over random event sequences ------------------------------

# Each event: (minutes after START, seconds out of time order, code). Ids follow the
# list's order; `at` grows with it but for up to 5 minutes either way.
events = st.lists(
    st.tuples(st.integers(0, 60), st.integers(-300, 300), st.sampled_from(EVENT_CODES)),
    max_size=40,
)
bound = st.none() | st.integers(-10, 70).map(lambda m: START + timedelta(minutes=m))


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    recorded=events,
    since=bound,
    until=bound,
    kind=st.sampled_from([*KINDS, "all"]),
    limit=st.integers(1, 6),
    stop_after=st.integers(0, 5),
)
def test_a_resumed_export_gives_exactly_the_rest(
    database: Database,
    recorded: list[tuple[int, int, str]],
    since: datetime | None,
    until: datetime | None,
    kind: str,
    limit: int,
    stop_after: int,
) -> None:
    if since is not None and until is not None and until <= since:
        until = None
    tenant = f"prop{next(_tenants)}"
    minutes = sorted(m for m, _, _ in recorded)  # `at` grows with the id, but for the skew
    rows = [
        event_values(
            REGISTRY[code],
            tenant=tenant,
            actor="test",
            message=code,
            now=START + timedelta(minutes=m, seconds=skew),
        )
        for m, (_, skew, code) in zip(minutes, recorded, strict=True)
    ]
    with database.begin() as conn:
        append_events(conn, rows)
        # Another tenant's events interleaved: never in this tenant's export.
        append_events(conn, [{**row, "tenant": "other"} for row in rows[:3]])
    service = ScheduleService(database, FakeClock(START + timedelta(days=2)))
    stored = sorted(service.audit.list(tenant, limit=1000), key=lambda e: e.id)
    expected = [
        e.id
        for e in stored
        if (kind == "all" or AUDIT_KINDS[e.code] == kind)
        and (since is None or e.created_at >= since)
        and (until is None or e.created_at < until)
    ]
    query: dict[str, Any] = {
        "since": None if since is None else since.isoformat(),
        "until": None if until is None else until.isoformat(),
        "kind": kind,
        "limit": limit,
    }
    # The first export stops after `stop_after` pages; the second resumes after its last record.
    seen: list[int] = []
    after = None
    for _ in range(stop_after):
        page = service.audit.export(tenant, after=after, **query)
        seen += [r.id for r in page.records]
        assert all(r.tenant == tenant for r in page.records)
        if page.next is None:
            break
        after = page.next
    rest = [r.id for r in _all(service, tenant, after=seen[-1] if seen else None, **query)]
    assert seen + rest == expected


def test_ids_far_apart_are_bisected(database: Database) -> None:
    """A long history before `since`: the window's start is found, nothing before it read
    into the answer, the ids around the bound exact."""
    start = datetime(2026, 3, 1, tzinfo=UTC)
    rows = [
        event_values(
            REGISTRY["V200030ITMSUC"],
            tenant="acme",
            actor="worker",
            message=str(n),
            now=start + timedelta(minutes=n),
        )
        for n in range(600)
    ]
    with database.begin() as conn:
        append_events(conn, rows)
    service = ScheduleService(database, FakeClock(start + timedelta(days=1)))
    since = start + timedelta(minutes=300)
    got = _all(service, since=since.isoformat(), until=(since + timedelta(hours=2)).isoformat())
    assert [r.message for r in got] == [str(n) for n in range(300, 420)]


def test_an_event_recorded_out_of_order_near_a_bound_is_in_its_window(
    database: Database,
) -> None:
    """Ids 2 and 3 recorded 4 minutes out of order: the bisection lands past id 2 unless
    it allows for it (store.events.OUT_OF_ORDER); membership is by time either way."""
    minutes = [0, 16, 13, 20, 31, 27, 40]
    rows = [
        event_values(
            REGISTRY["V200030ITMSUC"],
            tenant="acme",
            actor="worker",
            message=str(m),
            now=START + timedelta(minutes=m),
        )
        for m in minutes
    ]
    with database.begin() as conn:
        append_events(conn, rows)
    service = ScheduleService(database, FakeClock(START + timedelta(days=1)))
    since, until = START + timedelta(minutes=14), START + timedelta(minutes=30)
    got = _all(service, since=since.isoformat(), until=until.isoformat())
    assert [r.message for r in got] == ["16", "20", "27"]
