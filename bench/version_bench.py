"""Versions (issue 38): bytes per version, and listing 10,000 versions of one row.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/version_bench.py sqlite:////tmp/versions.db
    .venv/bin/python bench/version_bench.py postgresql+psycopg://postgres@127.0.0.1/cp_versions
    .venv/bin/python bench/version_bench.py sqlite:////tmp/versions.db --kind job --api

The database must exist (an empty SQLite file path or an empty PostgreSQL
database); it is migrated and emptied. One schedule (`--kind schedule`, the
default) or one job (`--kind job`) is edited `--edits` times (default
10,000, its create or registration included) through the service's edit
path — a schedule's cron and a label each time, a job's title and a label —
so each edit writes one version in its transaction, as in production; the
edits' mean cost is reported. Then:

- bytes per version: the version table with its indexes (PostgreSQL:
  pg_total_relation_size; SQLite: the dbstat pages of the table and its
  indexes) over its rows;
- the listing: the service's list of the row's versions, newest first, a
  page of 100 (the CLI's and the API's default) and of 1,000 (the most one
  call answers), and every version in one store statement, each `--runs`
  times in process: p50 and p99. `--api` also times `GET …/versions` (a page
  of 100) through the app in process (Starlette's TestClient: routing,
  auth, JSON; no socket). `--reuse` times the rows a previous run left.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import text

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobPatch, JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.store import job_versions as store_job_versions
from cronplane.store import versions as store_versions
from cronplane.store.database import Database
from cronplane.store.tables import metadata

SCOPE = Scope("acme", "billing", "prod")
# What a typical definition is made of, besides what each edit changes.
JOB = JobSpec(
    name="report",
    target="python:billing.jobs:report",
    title="Nightly billing report",
    payload={"region": "eu", "format": "pdf"},
    options={"timeout": 600, "max_attempts": 3},
    labels={"team": "pay"},
)
PATHS = {
    "schedule": "/api/v1/tenants/acme/schedules/billing/prod/nightly/versions",
    "job": "/api/v1/tenants/acme/jobs/billing/report/versions",
}


def _empty(database: Database) -> None:
    with database.begin() as conn:
        for table in reversed(metadata.sorted_tables):
            conn.execute(table.delete())


def _bytes(database: Database, table: str) -> int:
    with database.read() as conn:
        if database.dialect == "postgresql":
            conn.execute(text(f"ANALYZE {table}"))
            query = f"SELECT pg_total_relation_size('{table}')"
        else:
            query = (
                f"SELECT sum(pgsize) FROM dbstat WHERE name = '{table}' "
                f"OR name LIKE 'ix_{table}%' OR name LIKE 'sqlite_autoindex_{table}%'"
            )
        return int(conn.execute(text(query)).scalar_one())


def _timed(runs: int, call: Callable[[], object]) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[min(len(samples) - 1, int(len(samples) * 0.99))]


def _seed(
    database: Database, clock: FakeClock, service: ScheduleService, kind: str, edits: int
) -> float:
    """One row (or job) edited `edits - 1` times after its create; the mean ms of an edit."""
    _empty(database)
    service.register_job("acme", "billing", JOB, actor="bench")
    if kind == "schedule":
        service.create_schedule(
            SCOPE,
            ScheduleSpec(job="report", cron="0 2 * * *", name="nightly", labels={"team": "pay"}),
            actor="bench",
        )
    start = time.perf_counter()
    for n in range(edits - 1):
        clock.advance(60)
        if kind == "schedule":
            patch = SchedulePatch(cron=f"{n % 60} {n // 60 % 24} * * *", labels={"team": f"t{n}"})
            service.update_schedule(SCOPE, "nightly", patch, actor="bench")
        else:
            job_patch = JobPatch(title=f"Nightly billing report {n}", labels={"team": f"t{n}"})
            service.update_job("acme", "billing", "report", job_patch, actor="bench")
    return (time.perf_counter() - start) * 1000 / max(edits - 1, 1)


def _lister(service: ScheduleService, kind: str) -> Callable[[int], object]:
    if kind == "schedule":
        return lambda limit: service.list_versions(SCOPE, "nightly", limit=limit)
    return lambda limit: service.list_job_versions("acme", "billing", "report", limit=limit)


def _reader(
    database: Database, service: ScheduleService, kind: str, count: int
) -> Callable[[], Any]:
    if kind == "schedule":
        row_id = service.get_schedule(SCOPE, "nightly").id
        read: Callable[..., Any] = store_versions.list_versions
    else:
        row_id = service.get_job("acme", "billing", "report").id
        read = store_job_versions.list_versions

    def every() -> None:
        with database.read() as conn:
            read(conn, row_id, limit=count)

    return every


def _api(database: Database, clock: FakeClock, kind: str, runs: int) -> tuple[float, float]:
    from fastapi.testclient import TestClient

    from cronplane.api.app import create_app
    from cronplane.service.base import Context
    from cronplane.service.tokens import TokenService

    tokens = TokenService(Context(database, clock))
    secret = tokens.create(tenant="acme", role="admin", actor="bench").secret
    client = TestClient(create_app(database, clock))
    headers = {"Authorization": f"Bearer {secret}"}

    def page() -> None:
        answer = client.get(PATHS[kind], headers=headers)
        assert answer.status_code == 200 and len(answer.json()["items"]) == 100, answer.text

    page()  # the first request builds the app's caches
    return _timed(runs, page)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url")
    parser.add_argument("--kind", choices=("schedule", "job"), default="schedule")
    parser.add_argument("--edits", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--api", action="store_true", help="Also time GET …/versions.")
    parser.add_argument("--reuse", action="store_true", help="Keep the rows of a previous run.")
    args = parser.parse_args()
    kind = args.kind
    table = "schedule_versions" if kind == "schedule" else "job_versions"
    database = Database(args.url)
    database.upgrade()
    clock = FakeClock(datetime(2026, 1, 5, 12, tzinfo=UTC))
    service = ScheduleService(database, clock, python_targets=("billing",))
    edit_ms = float("nan") if args.reuse else _seed(database, clock, service, kind, args.edits)
    if database.dialect == "postgresql":
        # This machine's server runs with autovacuum off: without the statistics its
        # autoanalyze would have gathered, the planner guessed 50 versions for the row
        # and sorted all 10,000 of them for a page (57 ms, not 0.8).
        with database.begin() as conn:
            conn.execute(text(f"ANALYZE {table}"))
    with database.read() as conn:
        count = int(conn.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
    size = _bytes(database, table)
    listed = _lister(service, kind)
    page = _timed(args.runs, lambda: listed(100))
    most = _timed(args.runs, lambda: listed(1000))
    whole = _timed(args.runs, _reader(database, service, kind, count))
    print(f"database: {database.dialect}; versions of one {kind}")
    print(f"versions: {count:,} in {table}; an edit with its version: {edit_ms:.2f} ms mean")
    print(f"bytes per version (table + indexes): {size / count:,.0f} ({size:,} bytes)")
    print(f"list a page of 100: p50 {page[0]:.2f} ms, p99 {page[1]:.2f} ms")
    print(
        f"list a page of 1,000 (the most one call answers): p50 {most[0]:.2f} ms, p99 {most[1]:.2f} ms"
    )
    print(
        f"read all {count:,} (store, one statement): p50 {whole[0]:.2f} ms, p99 {whole[1]:.2f} ms"
    )
    if args.api:
        over = _api(database, clock, kind, args.runs)
        print(
            f"GET …/versions (a page of 100, in process): p50 {over[0]:.2f} ms, p99 {over[1]:.2f} ms"
        )
    database.dispose()


if __name__ == "__main__":
    main()
