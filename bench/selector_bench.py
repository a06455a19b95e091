"""Label selectors over 1,000,000 schedules (issue 37): p50/p99 of a listing page.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/selector_bench.py sqlite:////tmp/selectors.db
    .venv/bin/python bench/selector_bench.py postgresql+psycopg://postgres@127.0.0.1/cp_sel

The database must exist (an empty SQLite file path or an empty PostgreSQL
database); it is migrated, emptied and seeded in SQL: 1,000,000 schedules in
ONE tenant (a selector is always within a tenant, so one tenant holding every
row is the worst case: spread over tenants, each query sees fewer), each with
the labels team (20 values; none on 1 in 100), tier (3), env (2), region (5),
kind (`batch` but on 1 in 1,000: `stream`), and `legacy` on 1 in 100. The label
index is filled as migration 0018 fills it, each row's key set as 0027 does
(when the schema has them: main's before the change has not). Then, per
selector shape, the store's `list_page` (the API's and the CLI's listing: a
page of 100, rows ordered by name) is timed `--runs` times in process; then
the last page (the page after the selection's last row: empty, and what the
walk must prove) as many times; and the whole selection (`list_all`: what an
action by selector reads) once. `--shape` runs only the shapes whose name
contains it (repeatable).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from datetime import UTC, datetime

from sqlalchemy import inspect, text

from cronplane.core.queries import ScheduleQuery
from cronplane.store.database import Database
from cronplane.store.schedules import list_all, list_page
from dispatch_bench import reset, seed

# The fill's SQL of migration 0018 (its module name starts with a digit).
fill = importlib.import_module("cronplane.store.migrations.versions.0018_label_index")

SHAPES = {
    "one value (5 %)": "team=team-7",
    "set and not-equal (7 %)": "team in (team-1,team-2),tier!=batch",
    "three equals (3.3 %)": "env=prod,region=eu-west,tier=critical",
    "rare label (1 %)": "legacy",
    "rare and value (0.14 %)": "legacy,region=ap-south",
    "no such value (0 rows)": "team=nobody",
    "does not exist + value (5 %)": "!legacy,team=team-3",
    "notin only (60 %)": "region notin (eu-west,us-east)",
    # Negative terms only (the third sitting): over rows they mostly exclude, and not.
    "no team (1 %)": "!team",
    "not batch (0.1 %)": "kind!=batch",
    "no team, tier not batch (0.67 %)": "!team,tier!=batch",
    "no env (0 rows)": "!env",
    "kind in no value (0 rows)": "kind notin (batch,stream)",
    "no legacy (99 %)": "!legacy",
    # A common positive term with a rare negative one (the fourth sitting).
    "prod without a team (0.5 %)": "env=prod,!team",
    "critical, not batch (0.033 %)": "tier=critical,kind!=batch",
}
# Labels from the row's number n (name `s<n>`), the same SQL shape on both databases.
LABELS = {
    "team": "'team-' || (n % 20)",
    "tier": "CASE (n / 20) % 3 WHEN 0 THEN 'web' WHEN 1 THEN 'batch' ELSE 'critical' END",
    "env": "CASE (n / 60) % 2 WHEN 0 THEN 'prod' ELSE 'staging' END",
    "region": "CASE (n / 7) % 5 WHEN 0 THEN 'eu-west' WHEN 1 THEN 'us-east' WHEN 2 "
    "THEN 'us-west' WHEN 3 THEN 'ap-south' ELSE 'eu-north' END",
    "kind": "CASE WHEN n % 1000 = 7 THEN 'stream' ELSE 'batch' END",
}
# `legacy` on n % 100 = 0; no `team` on n % 100 = 50 (team-10's rows: no other shape's).
RARE = {0: {"legacy": "''"}, 50: {"team": None}}


def label_rows(database: Database, rows: int) -> None:
    """Give every seeded row its labels, then fill the index as migration 0018 does and the
    key sets as 0027 does (when the schema has them)."""
    sqlite = database.dialect == "sqlite"
    build = "json_object" if sqlite else "jsonb_build_object"

    def labels(rare: dict[str, str | None]) -> str:
        pairs = {**LABELS, **rare}
        listed = ", ".join(f"'{key}', {value}" for key, value in pairs.items() if value)
        return f"{build}({listed})"

    cases = " ".join(f"WHEN {r} THEN {labels(rare)}" for r, rare in RARE.items())
    n = "CAST(substr(name, 2) AS INTEGER)"
    with database.begin() as conn:
        conn.execute(
            text(
                f"UPDATE schedules SET labels = (SELECT CASE n % 100 {cases} "
                f"ELSE {labels({})} END FROM (SELECT {n} AS n) AS number)"
            )
        )
        conn.execute(text("DELETE FROM schedule_labels"))
        conn.execute(
            text(
                "INSERT INTO schedule_labels "
                "(schedule_id, tenant, key, value, name, stack, environment) "
                + fill.FILL[database.dialect]
            )
        )
        if "schedule_key_sets" in inspect(conn).get_table_names():
            sets = importlib.import_module("cronplane.store.migrations.versions.0027_key_sets")
            conn.execute(text("DELETE FROM schedule_key_sets"))
            conn.execute(text("DELETE FROM label_key_sets"))
            sets.fill(conn)
    analyze(database)


def analyze(database: Database) -> None:
    """Statistics and the visibility map for PostgreSQL (this server runs with autovacuum
    off): after seeding, and after a migration filled a table of a kept database."""
    if database.dialect == "sqlite":
        return
    with database.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT")
        for table in inspect(conn).get_table_names():
            if table in ("schedules", "schedule_state") or "label" in table or "key_set" in table:
                conn.exec_driver_sql(f"VACUUM ANALYZE {table}")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="Reuse a seeded database.")
    parser.add_argument("--shape", action="append", help="Only shapes whose name has this.")
    args = parser.parse_args()
    database = Database(args.url)
    started = time.perf_counter()
    database.upgrade()
    print(f"migrated in {time.perf_counter() - started:.1f} s")
    if not args.keep:
        started = time.perf_counter()
        reset(database)
        seed(database, 0, args.rows, datetime(2026, 1, 5, 12, 0, tzinfo=UTC), "s")
        label_rows(database, args.rows)
        print(f"seeded {args.rows:,} rows in {time.perf_counter() - started:.0f} s")
    else:
        analyze(database)
    shapes = {
        name: selector
        for name, selector in SHAPES.items()
        if not args.shape or any(part in name for part in args.shape)
    }
    print(f"{database.dialect}, {args.rows:,} schedules in one tenant, {args.runs} pages each")
    print(
        "| shape | selector | rows selected | page p50 ms | page p99 ms "
        "| last page p50 ms | last page p99 ms | whole selection ms |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, selector in shapes.items():
        query = ScheduleQuery(selector=selector).checked()
        times = timed(database, query, None, args.runs)
        started = time.perf_counter()
        with database.read() as conn:
            rows = list_all(conn, "bench", query)  # what an action by selector reads
        whole = (time.perf_counter() - started) * 1000
        with database.read() as conn:
            page = list_page(conn, "bench", query, limit=101)
        assert [row.id for row in page] == [row.id for row in rows[:101]], name
        last = "| — | — "
        if rows:
            after = (rows[-1].name, rows[-1].stack, rows[-1].environment)
            ends = timed(database, query, after, args.runs)
            last = f"| {percentile(ends, 50):.1f} | {percentile(ends, 99):.1f} "
        print(
            f"| {name} | `{selector}` | {len(rows):,} | {percentile(times, 50):.1f} | "
            f"{percentile(times, 99):.1f} {last}| {whole:.0f} |"
        )
        sys.stdout.flush()


def timed(
    database: Database, query: ScheduleQuery, after: tuple[str, str, str] | None, runs: int
) -> list[float]:
    """Milliseconds of `runs` pages of 100 (and one to tell if there is a next) after `after`."""
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        with database.read() as conn:
            page = list_page(conn, "bench", query, after=after, limit=101)
        times.append((time.perf_counter() - started) * 1000)
    assert after is None or page == [], "a page after the last row"
    return times


if __name__ == "__main__":
    main()
