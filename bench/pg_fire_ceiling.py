"""PostgreSQL fire path: the dispatcher's burst against a fire done by the server alone.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/pg_fire_ceiling.py --runs 4

Three figures for N schedules due at once (default 10,000), each the median
of `--runs` fresh seedings:

- **dispatcher**: the real `Dispatcher.tick()` (defaults: 2 lanes of 5,000)
  as bench/dispatch_bench.py runs it, with the CPU it cost: the client
  process and each lane's server process (from /proc, so the bench must run
  on the database's host);
- **server-only, full schema**: as many lanes as the dispatcher used
  connections (`--lanes` overrides), each one data-modifying statement
  (due rows FOR UPDATE SKIP LOCKED → items → schedule_state UPDATE → ledger
  events), no Python per row, every index of the real schema;
- **server-only, minimal schema**: the same statement after dropping every
  index that exactly-once does not need (kept: primary keys, the unique
  occurrence key, the due index).

Each burst runs in a database of its own, created for it. The two
server-only figures bound what any client could reach on this
machine; their difference is what the secondary indexes cost.
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time
from datetime import timedelta

import psycopg

import machine
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database, DatabaseClock
from dispatch_bench import PG_ADMIN, reset, seed

NAME = "cronplane_fire_ceiling"

FIRE = """
WITH due AS (
  SELECT st.id, s.tenant, s.stack, s.environment, s.name, s.job, s.payload, st.next_run
  FROM schedule_state st JOIN schedules s ON s.id = st.id
  WHERE st.enabled AND st.next_run <= now() ORDER BY st.next_run LIMIT %s
  FOR UPDATE OF st, s SKIP LOCKED
), ins AS (
  INSERT INTO queue_items (id, tenant, stack, environment, job, payload, source, schedule_id,
    scheduled_for, priority, status, available_at, attempts, max_attempts, created_at,
    updated_at, exclusive)
  SELECT gen_random_uuid(), tenant, stack, environment, job, payload, 'schedule', id, next_run,
    0, 'queued', now(), 0, 3, now(), now(), false FROM due
  RETURNING id, schedule_id
), upd AS (
  UPDATE schedule_state st SET last_run = now(), next_run = st.next_run + interval '1 day',
    run_count = st.run_count + 1
  FROM due WHERE st.id = due.id
)
INSERT INTO events (code, tenant, stack, environment, schedule_id, schedule_name, item_id,
  actor, message, scheduled_for, fired_at, created_at, detail)
SELECT 'V200610SCHTRG', d.tenant, d.stack, d.environment, d.id, d.name, ins.id, 'dispatcher',
  'fired', d.next_run, now(), now(), '{"coalesced": 1}'
FROM due d JOIN ins ON ins.schedule_id = d.id
"""
# Every index exactly-once does not need (the minimal schema drops them).
SECONDARY = (
    "ix_schedules_job",
    "ix_schedules_tenant_name",
    "ix_schedules_paused",
    "ix_queue_items_claim",
    "ix_queue_items_running",
    "ix_queue_items_schedule",
    "ix_queue_items_tenant",
    "ix_events_schedule",
    "ix_events_tenant",
)


def fresh(admin: str) -> Database:
    database = Database(machine.fresh_postgres(admin, NAME))
    database.upgrade()
    return database


def raw_url(database: Database) -> str:
    return database.url.replace("postgresql+psycopg://", "postgresql://")


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a local process (its /proc stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def dispatcher_burst(database: Database, n: int) -> dict[str, float]:
    reset(database)
    clock = DatabaseClock(database)
    due = (clock.now() + timedelta(seconds=2 + n / 5_000)).replace(microsecond=0)
    seed(database, 0, n, due, "due-")
    dispatcher = Dispatcher(database, clock, holder="ceiling")
    dispatcher.tick()
    time.sleep(max(0.0, (due - clock.now()).total_seconds()))
    server = {pid: cpu_seconds(pid) for pid in sessions(database)}
    client = time.process_time()
    report = dispatcher.tick()
    client = time.process_time() - client
    # Sessions the burst opened count whole; those open before, their growth.
    used = sessions(database)
    server_cpu = sum(cpu_seconds(pid) - server.get(pid, 0.0) for pid in used)
    assert report.fired == n, report
    last = max((batch.committed_at - due).total_seconds() for batch in report.batches)
    dispatcher.release()
    dispatcher.close()
    return {
        "fires_per_s": n / last,
        "client_cpu": client,
        "server_cpu": server_cpu,
        "connections": len(used),
    }


def sessions(database: Database) -> list[int]:
    """Server pids of the database's other sessions (the dispatcher's connections)."""
    with psycopg.connect(raw_url(database), autocommit=True) as conn:
        return [
            row[0]
            for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                (database.engine.url.database,),
            )
        ]


def server_only_burst(database: Database, n: int, lanes: int) -> float:
    reset(database)
    clock = DatabaseClock(database)
    seed(database, 0, n, (clock.now() - timedelta(seconds=1)).replace(microsecond=0), "due-")
    conns = [psycopg.connect(raw_url(database)) for _ in range(lanes)]
    for conn in conns:  # connected and warm before the clock starts
        conn.execute("SELECT 1")
        conn.commit()
    done: list[float] = []

    def lane(conn: psycopg.Connection[tuple[object, ...]]) -> None:
        conn.execute(FIRE, (-(-n // lanes),))
        conn.commit()
        done.append(time.perf_counter())

    started = time.perf_counter()
    threads = [threading.Thread(target=lane, args=(conn,)) for conn in conns]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for conn in conns:
        conn.close()
    assert len(done) == lanes
    return n / (max(done) - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument(
        "--lanes",
        type=int,
        default=None,
        help="server-only lanes (default: as many connections as the dispatcher used)",
    )
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    args = parser.parse_args()
    print(machine.header("pg fire ceiling"))
    runs: list[dict[str, float]] = []
    full: list[float] = []
    minimal: list[float] = []
    # Each burst in a new database (as dispatch_bench's), the three kinds alternated.
    for _ in range(args.runs):
        database = fresh(args.pg_admin)
        runs.append(dispatcher_burst(database, args.n))
        database.dispose()
        # Like for like: as many server connections as the dispatcher used.
        lanes = args.lanes or int(runs[-1]["connections"])
        database = fresh(args.pg_admin)
        full.append(server_only_burst(database, args.n, lanes))
        database.dispose()
        database = fresh(args.pg_admin)
        with psycopg.connect(raw_url(database), autocommit=True) as conn:
            for index in SECONDARY:
                conn.execute(f"DROP INDEX {index}")
        minimal.append(server_only_burst(database, args.n, lanes))
        database.dispose()

    def cell(values: list[float]) -> str:
        return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"

    connections = "/".join(sorted({str(int(r["connections"])) for r in runs}))
    print(f"\n{args.n:,} due at once, median (range) of {args.runs} runs:\n")
    print("| fire | fires/s | client CPU (s) | server CPU (s) |")
    print("|---|---|---|---|")
    print(
        f"| dispatcher ({connections} connections) | {cell([r['fires_per_s'] for r in runs])} | "
        f"{statistics.median(r['client_cpu'] for r in runs):.3f} | "
        f"{statistics.median(r['server_cpu'] for r in runs):.2f} |"
    )
    print(f"| server-only, full schema ({lanes} lanes) | {cell(full)} | 0 | |")
    print(f"| server-only, minimal schema ({lanes} lanes) | {cell(minimal)} | 0 | |")
    print(f"\n# load average at end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
