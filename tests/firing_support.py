"""Shared by the dispatch and worker tests: rows, a simple occurrence function, readers.

Rows are inserted straight into the tables so the dispatcher's tests depend
only on the schema, not on the service's validation.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

from sqlalchemy import delete, insert, select

from cronplane.clock import Clock
from cronplane.core.dst import DEBIAN, DstPolicy
from cronplane.core.firing import POLICY_FIELDS, Decision, DueRow, NextAfter, Previous, decide
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.schedules import insert_rows
from cronplane.store.tables import (
    SCHEDULE_COLUMNS,
    SCHEDULE_ROWS,
    events,
    jobs,
    leases,
    queue_items,
    schedule_state,
    schedules,
)

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
TENANT = "acme"


def occurrences(cron: str, timezone: str, dst: DstPolicy = DEBIAN) -> NextAfter:
    """Occurrences of `* * * * *`, `*/N * * * *` and `@every Ns`; `broken` fails.

    Enough for dispatch tests, independent of the real cron parser.
    """
    if cron == "broken":
        raise ValueError("unparsable test cron")
    if cron == "never-again":
        return lambda after: None
    if cron.startswith("@every ") and cron.endswith("s"):
        step = int(cron[len("@every ") : -1])
    elif cron == "* * * * *":
        step = 60
    elif cron.startswith("*/") and cron.endswith(" * * * *"):
        step = 60 * int(cron[2:].split()[0])
    else:
        raise ValueError(f"test occurrences cannot read {cron!r}")

    def next_after(after: datetime) -> datetime | None:
        seconds = int(after.timestamp()) // step * step + step
        return datetime.fromtimestamp(seconds, UTC)

    return next_after


def dispatcher(database: Database, clock: Clock, **options: Any) -> Dispatcher:
    """A dispatcher (holder `node-a` unless given) over the test occurrences."""
    options.setdefault("holder", "node-a")
    return Dispatcher(database, clock, occurrences=occurrences, **options)


def decided_alone(
    row: dict[str, Any], now: datetime, *, job_active: bool, active: bool
) -> Decision:
    """The oracle: a schedule row decided on its own (a failing cron fails each call)."""
    try:
        next_after = occurrences(row["cron"], "UTC")
    except ValueError as error:
        message = str(error)

        def failing(_after: datetime) -> datetime | None:
            raise ValueError(message)

        next_after = failing
    return decide(
        # Inputs the row does not set take DueRow's defaults (as the columns' do).
        DueRow(row["next_run"], **{name: row[name] for name in POLICY_FIELDS if name in row}),
        now=now,
        next_after=next_after,
        job_active=job_active,
        previous=Previous(running=active),
    )


def add_job(
    database: Database,
    name: str = "job",
    *,
    tenant: str = TENANT,
    stack: str = "default",
    status: str = "active",
    target: str = "python:handlers:ok",
    options: dict[str, Any] | None = None,
) -> None:
    """Insert one job row."""
    with database.begin() as conn:
        conn.execute(
            insert(jobs).values(
                id=uuid.uuid4(),
                tenant=tenant,
                stack=stack,
                name=name,
                title=name,
                kind=target.split(":", 1)[0],
                status=status,
                payload={},
                payload_schema=None,
                target=target,
                options=options or {},
                source="user",
                created_at=START,
                updated_at=START,
                revision=1,
            )
        )


def schedule_row(
    name: str,
    *,
    next_run: datetime | None,
    job: str = "job",
    cron: str = "* * * * *",
    tenant: str = TENANT,
    stack: str = "default",
    misfire_grace: int | None = None,
    overlap: str = "skip",
    enabled: bool = True,
    payload: dict[str, Any] | None = None,
    jitter_offset: int = 0,
    paused_at: datetime | None = None,
    paused_until: datetime | None = None,
) -> dict[str, Any]:
    """One schedules row's values (`next_run` as stored: nominal + `jitter_offset`)."""
    return {
        "id": uuid.uuid4(),
        "tenant": tenant,
        "stack": stack,
        "environment": "default",
        "name": name,
        "job": job,
        "cron": cron,
        "timezone": "UTC",
        "payload": payload if payload is not None else {"name": name},
        "enabled": enabled,
        "source": "user",
        "misfire_grace": misfire_grace,
        "overlap": overlap,
        "last_run": START - timedelta(hours=1),
        "next_run": next_run if enabled else None,
        "created_at": START - timedelta(hours=1),
        "updated_at": START - timedelta(hours=1),
        "revision": 1,
        "declared": None,
        "overrides": [],
        "jitter": None if not jitter_offset else jitter_offset + 1,
        "jitter_offset": jitter_offset,
        "paused_at": paused_at,
        "paused_until": paused_until,
        "paused_note": None if paused_at is None else f"note of {name}",
        "paused_by": None if paused_at is None else "ops@example.com",
    }


def add_schedule(database: Database, name: str = "every-minute", **values: Any) -> UUID:
    """Insert one schedule row; `next_run` defaults to START."""
    values.setdefault("next_run", START)
    row = schedule_row(name, **values)
    with database.begin() as conn:
        insert_rows(conn, [row])
    schedule_id: UUID = row["id"]
    return schedule_id


def add_schedules(database: Database, rows: list[dict[str, Any]]) -> None:
    """Insert many schedule rows (both tables: store.tables.schedule_state)."""
    with database.begin() as conn:
        insert_rows(conn, rows)


def items(database: Database, schedule_id: UUID | None = None) -> list[Any]:
    """Queue items (oldest occurrence first)."""
    query = select(queue_items).order_by(queue_items.c.scheduled_for, queue_items.c.created_at)
    if schedule_id is not None:
        query = query.where(queue_items.c.schedule_id == schedule_id)
    with database.read() as conn:
        return list(conn.execute(query))


def ledger(database: Database, schedule_id: UUID | None = None) -> list[Any]:
    """Occurrence-ledger events (with a schedule), oldest first."""
    query = select(events).where(events.c.schedule_id.is_not(None)).order_by(events.c.id)
    if schedule_id is not None:
        query = query.where(events.c.schedule_id == schedule_id)
    with database.read() as conn:
        return list(conn.execute(query))


def schedule(database: Database, schedule_id: UUID) -> Any:
    """One schedule's row (schedules joined with its state)."""
    query = select(*SCHEDULE_COLUMNS).select_from(SCHEDULE_ROWS)
    with database.read() as conn:
        return conn.execute(query.where(schedules.c.id == schedule_id)).one()


def check_exactly_once(database: Database) -> dict[str, int]:
    """The exactly-once checks, in SQL and over the ledger; returns a few counts.

    - no (schedule_id, scheduled_for) twice among the queue items;
    - every item has its fired event and every fired event its item;
    - per schedule, the ledger covers every occurrence from the first due one
      to the row's current next_run, each exactly once (coalesced fires count
      all the occurrences they stand for).
    """
    from sqlalchemy import text

    fired_code = "V200610SCHTRG"
    with database.read() as conn:
        if database.dialect == "postgresql":
            # Fresh statistics: planned on a stale "19 rows", the anti-joins
            # below ran as nested loops over tens of thousands of rows.
            conn.exec_driver_sql("ANALYZE queue_items, events")
        dupes = conn.execute(
            text(
                "SELECT schedule_id, scheduled_for, count(*) FROM queue_items "
                "WHERE scheduled_for IS NOT NULL GROUP BY schedule_id, scheduled_for "
                "HAVING count(*) > 1"
            )
        ).all()
        assert dupes == [], f"duplicate occurrences: {dupes[:5]}"
        orphans = conn.execute(
            text(
                "SELECT q.id FROM queue_items q LEFT JOIN events e "
                "ON e.item_id = q.id AND e.code = :code "
                "WHERE q.source = 'schedule' AND e.id IS NULL"
            ),
            {"code": fired_code},
        ).all()
        assert orphans == [], f"items without their fired event: {orphans[:5]}"
        ghost_events = conn.execute(
            text(
                "SELECT e.id FROM events e LEFT JOIN queue_items q ON q.id = e.item_id "
                "WHERE e.code = :code AND q.id IS NULL"
            ),
            {"code": fired_code},
        ).all()
        assert ghost_events == [], f"fired events without their item: {ghost_events[:5]}"
        rows = conn.execute(select(*SCHEDULE_COLUMNS).select_from(SCHEDULE_ROWS)).all()
    max_coalesced = 0
    total = 0
    for row in rows:
        step = occurrences(row.cron, row.timezone)
        evs = [e for e in ledger(database, row.id) if e.code != "V202007SCHRUN"]
        if not evs:
            continue
        expected = datetime.fromisoformat(evs[0].detail["first_due"])
        for event in evs:
            assert datetime.fromisoformat(event.detail["first_due"]) == expected, (
                f"{row.name}: gap or overlap before {event.scheduled_for}"
            )
            covered, occurrence = 1, expected
            while occurrence < event.scheduled_for:
                occurrence = step(occurrence)  # type: ignore[assignment]
                covered += 1
            assert occurrence == event.scheduled_for
            assert covered == event.detail["coalesced"]
            max_coalesced = max(max_coalesced, covered)
            total += covered
            expected = step(event.scheduled_for)  # type: ignore[assignment]
        assert row.next_run == expected, f"{row.name}: next_run {row.next_run} != {expected}"
    return {"occurrences": total, "max_coalesced": max_coalesced}


def item_row(
    job: str = "job", *, now: datetime, source: str = "api", **values: Any
) -> dict[str, Any]:
    """A queue item's values in acme/default/default (`queue.item_values`, empty payload)."""
    return queue.item_values(
        tenant="acme",
        stack="default",
        environment="default",
        job=job,
        payload={},
        source=source,
        now=now,
        **values,
    )


def enqueue_items(database: Database, rows: list[dict[str, Any]]) -> None:
    """Insert queue items (made by `item_row`) in one transaction."""
    with database.begin() as conn:
        for row in rows:
            queue.enqueue(conn, row)


def empty_firing_tables(database: Database) -> None:
    """Delete what fires read and write (a property test's examples share one database)."""
    with database.begin() as conn:
        for table in (events, queue_items, schedule_state, schedules, jobs, leases):
            conn.execute(delete(table))
