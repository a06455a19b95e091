"""Store and sync benchmark (run by hand; results in docs/performance.md).

    .venv/bin/python bench/store_bench.py            # SQLite and PostgreSQL
    .venv/bin/python bench/store_bench.py --only sqlite --rows 100000

Measures, on each database:
1. sync of a 10,000-cron manifest: first (creates) and repeated (must write
   nothing: schedule rows and events are compared before and after);
2. create of 100,000 schedules through the service's bulk path (one sync of
   a 100,000-cron manifest: one transaction, executemany inserts), plus the
   per-row path (`create_schedule`, one transaction each) for 1,000 rows;
3. a filtered page of 100 out of 1,000,000 rows (the rows are loaded with
   executemany / COPY, not through the service), median of 25 calls.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

import psycopg
from sqlalchemy import func, select

from cronplane.clock import FakeClock
from cronplane.core.inputs import CronDeclaration, JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.store.tables import events, schedules

# The bench's own `python:` job module may run (CRONPLANE_PYTHON_TARGETS): in this process
# and the servers and workers it starts.
os.environ.setdefault("CRONPLANE_PYTHON_TARGETS", "bench")

PG_ADMIN = os.environ.get("CRONPLANE_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
NOW = datetime(2026, 1, 5, 12, tzinfo=UTC)


def fresh_sqlite(directory: str, name: str) -> Database:
    database = Database(f"sqlite:///{directory}/{name}.db")
    database.upgrade()
    return database


def fresh_postgres(name: str) -> Database:
    admin = PG_ADMIN.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    database = Database(
        admin.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + "/" + name
    )
    database.upgrade()
    return database


def drop_postgres(name: str) -> None:
    admin = PG_ADMIN.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def timed(action: Callable[[], object]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def written(database: Database) -> tuple[int, int, object]:
    with database.read() as conn:
        return (
            conn.execute(select(func.count()).select_from(schedules)).scalar_one(),
            conn.execute(select(func.count()).select_from(events)).scalar_one(),
            conn.execute(select(func.max(schedules.c.updated_at))).scalar_one(),
        )


def manifest(count: int) -> dict[str, CronDeclaration]:
    forms = ["*/15 * * * *", "at 02:30", "H * * * *", "0 9 * * MON-FRI", "every 7 minutes"]
    return {
        f"cron-{i:06}": CronDeclaration(cron=forms[i % len(forms)], job=f"job-{i % 10}")
        for i in range(count)
    }


def service_with_jobs(database: Database, stack: str) -> ScheduleService:
    service = ScheduleService(database, FakeClock(NOW))
    for j in range(10):
        service.register_job(
            "bench", stack, JobSpec(name=f"job-{j}", target="python:bench.jobs:run"), actor="bench"
        )
    return service


def bench_sync(database: Database, crons: int) -> dict[str, float]:
    service = service_with_jobs(database, "app")
    scope = Scope("bench", "app", "production")
    declared = manifest(crons)
    first = timed(lambda: service.sync(scope, declared, actor="bench"))
    before = written(database)
    repeated = min(timed(lambda: service.sync(scope, declared, actor="bench")) for _ in range(3))
    assert written(database) == before, "a repeated sync wrote something"
    return {"sync_first_s": first, "sync_repeated_s": repeated}


def bench_create(database: Database, rows: int, single: int) -> dict[str, float]:
    service = service_with_jobs(database, "bulk")
    bulk = timed(lambda: service.sync(Scope("bench", "bulk", "e"), manifest(rows), actor="bench"))

    def one_by_one() -> None:
        for i in range(single):
            service.create_schedule(
                Scope("bench", "bulk", "single"),
                ScheduleSpec(job="job-1", cron="*/5 * * * *", name=f"s{i}"),
                actor="bench",
            )

    per_row = timed(one_by_one)
    return {"create_bulk_s": bulk, "create_single_ms_each": per_row / single * 1000}


# The columns load_rows writes: of `schedules`, and of its state (schedule_state).
_MAIN = (
    "id", "tenant", "stack", "environment", "name", "job", "cron", "timezone", "payload",
    "source", "misfire_grace", "overlap", "created_at", "updated_at", "revision", "declared",
    "overrides",
)  # fmt: skip
_STATE = ("id", "tenant", "enabled", "last_run", "next_run")


def load_rows(database: Database, total: int) -> None:
    """1,000,000 rows: 100 stacks x 10 environments x N names, 20 jobs, 90 % enabled."""
    names = total // 1000

    def rows() -> Iterator[tuple[tuple[object, ...], tuple[object, ...]]]:
        for s in range(100):
            for e in range(10):
                for n in range(names):
                    i = (s * 10 + e) * names + n
                    sid = uuid.uuid4()
                    main = (
                        sid, "big", f"s{s:03}", f"e{e}", f"n{n:05}", f"j{i % 20}",
                        "*/5 * * * *", "UTC", "{}", "user", None, "skip", NOW, NOW, 1, None, "[]",
                    )  # fmt: skip
                    state = (sid, "big", i % 10 != 0, NOW, NOW + timedelta(minutes=5 + i % 60))
                    yield main, state

    if database.dialect == "postgresql":
        raw = database.engine.raw_connection()
        try:
            cursor = raw.cursor()
            loaded = list(rows())
            for table, columns, at in (("schedules", _MAIN, 0), ("schedule_state", _STATE, 1)):
                with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:  # type: ignore[attr-defined]
                    for row in loaded:
                        copy.write_row(row[at])
            raw.commit()
        finally:
            raw.close()
        with database.begin() as conn:
            conn.exec_driver_sql("ANALYZE schedules")
            conn.exec_driver_sql("ANALYZE schedule_state")
        return

    def sqlite_row(row: tuple[object, ...]) -> tuple[object, ...]:
        return tuple(
            value.hex
            if isinstance(value, uuid.UUID)
            else value.replace(tzinfo=None).isoformat(sep=" ")
            if isinstance(value, datetime)
            else value
            for value in row
        )

    raw = database.engine.raw_connection()
    try:
        cursor = raw.cursor()
        cursor.execute("BEGIN")
        inserts = [
            f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
            for table, columns in (("schedules", _MAIN), ("schedule_state", _STATE))
        ]
        batches: tuple[list[tuple[object, ...]], list[tuple[object, ...]]] = ([], [])
        for main, state in rows():
            batches[0].append(sqlite_row(main))
            batches[1].append(sqlite_row(state))
            if len(batches[0]) == 20_000:
                for sql, batch in zip(inserts, batches, strict=True):
                    cursor.executemany(sql, batch)
                    batch.clear()
        for sql, batch in zip(inserts, batches, strict=True):
            if batch:
                cursor.executemany(sql, batch)
        cursor.execute("COMMIT")
        cursor.execute("ANALYZE")
    finally:
        raw.close()


def bench_page(database: Database, total: int) -> dict[str, float]:
    load_seconds = timed(lambda: load_rows(database, total))
    service = ScheduleService(database, FakeClock(NOW))

    def median_ms(call: Callable[[], object]) -> float:
        call()  # warm
        return statistics.median(timed(call) for _ in range(25)) * 1000

    scoped = lambda: service.list_schedules(  # noqa: E731
        "big", ScheduleQuery(stack="s042", environment="e3", enabled=True, limit=100)
    )
    first = scoped()
    assert len(first.items) == 100 and first.next_cursor
    second = lambda: service.list_schedules(  # noqa: E731
        "big",
        ScheduleQuery(
            stack="s042", environment="e3", enabled=True, limit=100, cursor=first.next_cursor
        ),
    )
    by_job = lambda: service.list_schedules("big", ScheduleQuery(job="j7", limit=100))  # noqa: E731
    by_job_scoped = lambda: service.list_schedules(  # noqa: E731
        "big", ScheduleQuery(stack="s042", environment="e3", job="j7", limit=100)
    )
    return {
        "load_s": load_seconds,
        "page_scope_enabled_ms": median_ms(scoped),
        "page_scope_enabled_next_ms": median_ms(second),
        "page_scope_job_ms": median_ms(by_job_scoped),
        "page_tenant_job_ms": median_ms(by_job),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--only", choices=["sqlite", "postgres"], default=None)
    parser.add_argument("--crons", type=int, default=10_000)
    parser.add_argument("--create", type=int, default=100_000)
    parser.add_argument("--single", type=int, default=1_000)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--parts", default="sync,create,page", help="Which parts to run.")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        for label in ("sqlite", "postgres"):
            if args.only and label != args.only:
                continue
            figures: dict[str, float] = {}
            for part, run in (
                ("sync", lambda db: bench_sync(db, args.crons)),
                ("create", lambda db: bench_create(db, args.create, args.single)),
                ("page", lambda db: bench_page(db, args.rows)),
            ):
                if part not in args.parts.split(","):
                    continue
                name = f"cronplane_bench_{part}"
                database = (
                    fresh_sqlite(directory, name) if label == "sqlite" else fresh_postgres(name)
                )
                try:
                    figures.update(run(database))
                finally:
                    database.dispose()
                    if label == "postgres":
                        drop_postgres(name)
                print(label, part, {k: round(v, 4) for k, v in figures.items()}, file=sys.stderr)
            results[label] = figures
    keys = sorted({k for figures in results.values() for k in figures})
    print("| measure | " + " | ".join(results) + " |")
    print("|---|" + "---|" * len(results))
    for key in keys:
        print(
            f"| {key} | "
            + " | ".join(f"{results[db].get(key, float('nan')):.4g}" for db in results)
            + " |"
        )


if __name__ == "__main__":
    main()
