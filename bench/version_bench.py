"""Schedule versions (issue 38): bytes per version, and listing 10,000 versions of one row.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/version_bench.py sqlite:////tmp/versions.db
    .venv/bin/python bench/version_bench.py postgresql+psycopg://postgres@127.0.0.1/cp_versions

The database must exist (an empty SQLite file path or an empty PostgreSQL
database); it is migrated and emptied. One schedule is edited `--edits` times
(default 10,000) through the service's edit path, each edit changing its cron
and a label (so each writes one version, in the edit's transaction, as in
production); the edits' mean cost is reported. Then:

- bytes per version: the table with its indexes (PostgreSQL:
  pg_total_relation_size; SQLite: the dbstat pages of the table and its
  indexes) over the rows;
- the listing: `service.list_versions` of the row, newest first, a page of
  100 (the CLI's and the API's default) and of 1,000 (the most one call
  answers), and every version in one store statement, each `--runs` times in
  process: p50 and p99. `--reuse` times the rows a previous run left.
"""

from __future__ import annotations

import argparse
import statistics
import time
from datetime import UTC, datetime

from sqlalchemy import text

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.store import versions as store_versions
from cronplane.store.database import Database
from cronplane.store.tables import metadata

SCOPE = Scope("acme", "billing", "prod")


def _empty(database: Database) -> None:
    with database.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())


def _bytes(database: Database) -> int:
    with database.read() as conn:
        if database.dialect == "postgresql":
            conn.execute(text("ANALYZE schedule_versions"))
            query = "SELECT pg_total_relation_size('schedule_versions')"
        else:
            query = (
                "SELECT sum(pgsize) FROM dbstat WHERE name = 'schedule_versions' "
                "OR name LIKE 'ix_schedule_versions%' OR name LIKE 'sqlite_autoindex_schedule_versions%'"
            )
        return int(conn.execute(text(query)).scalar_one())


def _timed(runs: int, call: object) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def _seed(database: Database, clock: FakeClock, service: ScheduleService, edits: int) -> float:
    """One row edited `edits - 1` times after its create; the mean ms of an edit."""
    _empty(database)
    service.register_job(
        "acme", "billing", JobSpec(name="report", target="python:billing.jobs:report"), actor="b"
    )
    service.create_schedule(
        SCOPE,
        ScheduleSpec(job="report", cron="0 2 * * *", name="nightly", labels={"team": "pay"}),
        actor="bench",
    )
    start = time.perf_counter()
    for n in range(edits - 1):
        clock.advance(60)
        patch = SchedulePatch(cron=f"{n % 60} {n // 60 % 24} * * *", labels={"team": f"t{n}"})
        service.update_schedule(SCOPE, "nightly", patch, actor="bench")
    return (time.perf_counter() - start) * 1000 / max(edits - 1, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--reuse", action="store_true", help="Keep the rows of a previous run.")
    args = parser.parse_args()
    database = Database(args.url)
    database.upgrade()
    clock = FakeClock(datetime(2026, 1, 5, 12, tzinfo=UTC))
    service = ScheduleService(database, clock, python_targets=("billing",))
    edit_ms = _seed(database, clock, service, args.edits) if not args.reuse else float("nan")
    with database.read() as conn:
        count = int(conn.execute(text("SELECT count(*) FROM schedule_versions")).scalar_one())
    size = _bytes(database)
    page = _timed(args.runs, lambda: service.list_versions(SCOPE, "nightly", limit=100))
    most = _timed(args.runs, lambda: service.list_versions(SCOPE, "nightly", limit=1000))
    row = service.get_schedule(SCOPE, "nightly")

    def every() -> None:
        with database.read() as conn:
            store_versions.list_versions(conn, row.id, limit=count)

    whole = _timed(args.runs, every)
    print(f"database: {database.dialect}")
    print(f"versions: {count:,} of one row; an edit with its version: {edit_ms:.2f} ms mean")
    print(f"bytes per version (table + indexes): {size / count:,.0f} ({size:,} bytes)")
    print(f"list a page of 100: p50 {page[0]:.2f} ms, p99 {page[1]:.2f} ms")
    print(
        f"list a page of 1,000 (the most one call answers): p50 {most[0]:.2f} ms, p99 {most[1]:.2f} ms"
    )
    print(
        f"read all {count:,} (store, one statement): p50 {whole[0]:.2f} ms, p99 {whole[1]:.2f} ms"
    )
    database.dispose()


if __name__ == "__main__":
    main()
