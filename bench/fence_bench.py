"""What the fence of moved tenants (issue 41) costs an insert of schedules.

Inserts ROWS schedules (50 tenants, transactions of 2,000) into a fresh
database, alternating rounds with the fence's trigger in place and without it,
and prints each round's seconds. The trigger is made by the first tenant that
leaves a shard (Dialect.fence_moved_tenants), here by hand.

    .venv/bin/python bench/fence_bench.py sqlite:////tmp/fence.db
    .venv/bin/python bench/fence_bench.py postgresql+psycopg://postgres@127.0.0.1/cp_fence
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

from sqlalchemy import text

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cronplane.store import dialects
from cronplane.store.database import Database
from cronplane.store.schedules import insert_rows
from firing_support import START, schedule_row


def fresh(url: str) -> Database:
    """A new, migrated database at `url` (a PostgreSQL one is dropped and made again)."""
    if url.startswith("sqlite"):
        Path(url.split("///", 1)[1]).unlink(missing_ok=True)
    else:
        import psycopg

        base, name = url.replace("+psycopg", "").rsplit("/", 1)
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
    database = Database(url)
    database.upgrade()
    return database


def insert(database: Database, rows: int) -> float:
    made = [
        schedule_row(f"s-{uuid.uuid4().hex[:16]}", next_run=START, tenant=f"t{n % 50}")
        for n in range(rows)
    ]
    started = time.perf_counter()
    for at in range(0, rows, 2000):
        with database.begin() as conn:
            insert_rows(conn, made[at : at + 2000])
    return time.perf_counter() - started


def fence(database: Database, on: bool) -> None:
    with database.begin() as conn:
        if on:
            dialects.of(conn).fence_moved_tenants(conn)
            return
        for table in ("schedules", "jobs"):
            if database.dialect == "sqlite":
                conn.execute(text(f"DROP TRIGGER IF EXISTS tenant_here_{table}"))
            else:
                conn.execute(text(f"DROP TRIGGER IF EXISTS tenant_here ON {table}"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=4)
    args = parser.parse_args()
    database = fresh(args.url)
    seconds: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.rounds):
        for on in (True, False):
            fence(database, on)
            seconds[on].append(insert(database, args.rows))
    for on, taken in seconds.items():
        label = "with the fence" if on else "without it"
        print(f"{database.dialect} {label:15} " + "; ".join(f"{s:.2f} s" for s in taken))
    print(f"ratio of the sums: {sum(seconds[True]) / sum(seconds[False]):.2f}")
    database.dispose()


if __name__ == "__main__":
    main()
