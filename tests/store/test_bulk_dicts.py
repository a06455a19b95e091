"""store.bulk_rows.insert_dicts and Dialect.update_rows (the alert evaluator's batched
writes) store values exactly as Core's insert and update do, on both databases:
datetimes, uuids, booleans, floats, NULLs, and JSON with characters COPY escapes;
and the evaluator reads paused schedules by their partial index."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert, select

from cronplane.store import queue
from cronplane.store.alerts import paused_query
from cronplane.store.bulk_rows import insert_dicts
from cronplane.store.database import Database
from cronplane.store.tables import alert_watches, queue_items

WHEN = datetime(2026, 3, 2, 10, 0, 0, 123456, tzinfo=UTC)
AWKWARD = {"text": "tab\there\nnew line \\ back\\slash \r é ✓", "list": [1, None, True]}


def item(n: int, **changes: object) -> dict[str, object]:
    values = queue.item_values(
        tenant="acme", stack="s", environment="e", job=f"job{n}", payload=AWKWARD,
        source="api", now=WHEN, schedule_id=uuid.uuid4(), scheduled_for=WHEN,
        timeout=1.5, exclusive=True,
    )  # fmt: skip
    values.update(changes)
    return values


def test_inserted_dicts_read_back_as_core_writes_them(database: Database) -> None:
    bulk = [item(0), item(1, exclusive=False, timeout=None, schedule_id=None, result={"a": "\t"})]
    core = [item(2), item(3, exclusive=False, timeout=None, schedule_id=None, result={"a": "\t"})]
    with database.begin() as conn:
        insert_dicts(conn, queue_items, bulk)
        conn.execute(insert(queue_items), core)
    with database.read() as conn:
        rows = {r.job: r._mapping for r in conn.execute(select(queue_items))}
        by_time = conn.execute(
            select(queue_items.c.job).where(queue_items.c.scheduled_for == WHEN)
        ).scalars()
        assert sorted(by_time) == ["job0", "job1", "job2", "job3"]
    for written, mine, theirs in ((bulk[0], "job0", "job2"), (bulk[1], "job1", "job3")):
        assert rows[mine]["id"] == written["id"]
        skip = {"id", "job"}
        assert {k: v for k, v in rows[mine].items() if k not in skip} == {
            k: v for k, v in rows[theirs].items() if k not in skip
        } | {"schedule_id": written["schedule_id"]}
    assert rows["job0"]["payload"] == AWKWARD and rows["job0"]["exclusive"] is True
    assert rows["job1"]["timeout"] is None and rows["job1"]["result"] == {"a": "\t"}


def test_update_rows_moves_each_row_to_its_own_value(database: Database) -> None:
    rules, schedules = [uuid.uuid4() for _ in range(3)], [uuid.uuid4() for _ in range(3)]
    with database.begin() as conn:
        conn.execute(
            insert(alert_watches),
            [
                {"rule_id": r, "schedule_id": s, "tenant": "acme", "due_at": WHEN}
                for r in rules
                for s in schedules
            ],
        )
        enc = database.backend.params
        moved = [
            (enc.datetime(WHEN + timedelta(minutes=n)), enc.uuid(rules[n]), enc.uuid(schedules[n]))
            for n in range(3)
        ]
        database.backend.update_rows(
            conn, alert_watches, ("rule_id", "schedule_id"), "due_at", moved
        )
    with database.read() as conn:
        due = {(r.rule_id, r.schedule_id): r.due_at for r in conn.execute(select(alert_watches))}
    for r, rule in enumerate(rules):
        for s, schedule in enumerate(schedules):
            assert due[(rule, schedule)] == (WHEN + timedelta(minutes=r) if r == s else WHEN)


def test_sqlite_reads_paused_schedules_by_their_partial_index(sqlite_database: Database) -> None:
    query = paused_query(WHEN, WHEN).compile(dialect=sqlite_database.engine.dialect)
    params = tuple(str(query.params[name]) for name in query.positiontup or ())
    with sqlite_database.read() as conn:
        plan = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {query}", params).all()
    # Each paused row's state (`enabled`, store.tables.schedule_state) by its key.
    assert [row[-1] for row in plan] == [
        "SEARCH schedules USING INDEX ix_schedules_paused (paused_at>? AND paused_at<?)",
        "SEARCH schedule_state USING INDEX sqlite_autoindex_schedule_state_1 (id=?)",
    ]
