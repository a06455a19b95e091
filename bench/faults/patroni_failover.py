"""cronplane across Patroni switchovers and failovers (issue 40): run by hand, not in CI.

Needs Debian 12's `apt-get install -y patroni etcd-server` (patroni 3.0.2,
etcd 3.4) and PostgreSQL 15's binaries in /usr/lib/postgresql/15/bin. Run from
the checkout, as root (etcd, Patroni and postgres then run as the `postgres`
user through `runuser -u postgres --`; PostgreSQL refuses root) or as any
other user (they run as that user)::

    .venv/bin/python bench/faults/patroni_failover.py            # synchronous, 10 + 5
    .venv/bin/python bench/faults/patroni_failover.py --async    # the asynchronous comparison

Everything is on 127.0.0.1, on free ports, in a temporary directory (kept
and named when a check fails, or with --keep):

1. a single-node etcd and a two-node Patroni cluster (patroni_cluster.py),
   `synchronous_mode: true` unless --async;
2. the schema through the multi-host URL every cronplane process uses,
   `postgresql+psycopg://postgres@/cronplane?host=127.0.0.1:P1&host=127.0.0.1:P2
   &target_session_attrs=read-write` (`cronplane db upgrade`), then an app of
   1,000 schedules `every 10 seconds` whose `python:` target
   (failover_target.py) appends (schedule, scheduled_for, pid, item, attempt)
   to a file;
3. two `cronplane serve` nodes (dispatcher + 2 workers each);
4. while they run, --switchovers `patronictl switchover` and --failovers
   (SIGKILL of the primary's postmaster and every process it started; Patroni
   promotes the standby at once: primary_start_timeout 0), in the order S S F,
   each once the cluster is healthy again and --spacing seconds later. Before
   a kill the standby is made to fall behind: the primary's WAL senders are
   stopped (SIGSTOP) from 0.5 s before a 10-second instant for --stall seconds
   (1.5), while the dispatcher commits that instant's 1,000 fires and the
   workers start running them; then the kill (`--stall 0`: the kill alone,
   0.15 s before the instant). Under synchronous replication no commit is
   acknowledged meanwhile; under asynchronous ones are, and the standby
   promoted lacks them;
   the API (`/readyz` and a schedule listing on both nodes) is polled every
   0.25 s throughout and every status recorded (a 503 with its code is the
   promise, a 500 a failure);
5. afterwards, for every schedule and every instant from the first watched
   one to the last: exactly one queue item, one fired ledger event and one
   line in the file (an occurrence folded into a later fire counts only when
   that fire's ledger event records it, `coalesced`; a skip only with its
   event); every line's item still in the database, and every item committed
   before a switch still there after it ("nothing committed lost"); and per
   switch the firing gap (the last fire before to the first after) and the
   worst lateness of a fire near it.

It prints a report (also written to report.json in the directory) and exits 1
when a check fails under synchronous replication. Under --async a loss is
the measured trade-off, reported and not a failure. Figures:
docs/operations.md, "Across a Patroni failover".
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import failover_checks
import psycopg
from failover_checks import Poller, Switch
from patroni_cluster import Cluster, free_port, missing_tools
from sqlalchemy import text

from cronplane.store.database import Database

HERE = Path(__file__).resolve().parent
CRONPLANE = str(Path(sys.executable).with_name("cronplane"))
STACK = "failover"
EVERY = 10  # seconds between a schedule's occurrences


def multi_host_url(cluster: Cluster) -> str:
    """The URL of every cronplane process: both members, the primary chosen by libpq."""
    hosts = "&".join(f"host=127.0.0.1:{m.pg_port}" for m in cluster.members)
    return (
        f"postgresql+psycopg://postgres@/cronplane?{hosts}"
        "&target_session_attrs=read-write&connect_timeout=3"
    )


def create_database(cluster: Cluster) -> None:
    leader = cluster.leader()
    assert leader is not None
    dsn = f"host=127.0.0.1 port={leader.pg_port} user=postgres dbname=postgres"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE DATABASE cronplane")


def cli(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [CRONPLANE, *args], env=env, capture_output=True, text=True, check=False, timeout=300
    )
    if done.returncode != 0:
        raise RuntimeError(f"cronplane {' '.join(args)}: {done.returncode}\n{done.stderr}")
    return done.stdout


def manifest(path: Path, target_file: Path, count: int) -> None:
    """An app of `count` schedules `every 10 seconds` (JSON is YAML)."""
    failover_checks.write_app(path, target_file, {f"s{n:04d}": EVERY for n in range(count)})


def start_serve(env: dict[str, str], port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [CRONPLANE, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def stop_serve(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def db_now(database: Database) -> datetime:
    """The primary's clock, retried through a switch."""
    for _ in range(120):
        try:
            return database.now()
        except Exception:
            time.sleep(0.5)
    raise RuntimeError("the database did not answer for a minute")


def instant_after(moment: datetime, seconds: float) -> datetime:
    """The first multiple of EVERY seconds (from the epoch) at or after moment + seconds."""
    epoch = (moment + timedelta(seconds=seconds)).timestamp()
    return datetime.fromtimestamp(-(-epoch // EVERY) * EVERY, UTC)


def sleep_until_before_instant(database: Database, lead: float) -> None:
    """Sleep until `lead` seconds before the next 10-second instant (the database's clock)."""
    now = db_now(database)
    target = instant_after(now, lead + 1.0) - timedelta(seconds=lead)
    time.sleep(max(0.0, (target - db_now(database)).total_seconds()))


def recent_items(database: Database, seconds: float) -> set[str]:
    """Ids of the bench's items committed in the last `seconds` (what a switch could lose)."""
    query = text(
        "SELECT id::text FROM queue_items WHERE stack = :stack "
        "AND created_at > clock_timestamp() - make_interval(secs => :seconds)"
    )
    for _ in range(120):
        try:
            with database.read() as conn:
                return {row[0] for row in conn.execute(query, {"stack": STACK, "seconds": seconds})}
        except Exception:
            time.sleep(0.5)
    raise RuntimeError("the database did not answer for a minute")


def still_there(database: Database, ids: set[str]) -> int:
    """How many of `ids` the (new) primary has."""
    query = text("SELECT count(*) FROM queue_items WHERE id::text = ANY(:ids)")
    for _ in range(120):
        try:
            with database.read() as conn:
                return int(conn.execute(query, {"ids": sorted(ids)}).scalar_one())
        except Exception:
            time.sleep(0.5)
    raise RuntimeError("the database did not answer for a minute")


def plan(switchovers: int, failovers: int) -> list[str]:
    """S S F … : the failovers spread among the switchovers."""
    order: list[str] = []
    while switchovers or failovers:
        for _ in range(2):
            if switchovers:
                order.append("switchover")
                switchovers -= 1
        if failovers:
            order.append("failover")
            failovers -= 1
    return order


def wait_drained(database: Database, until: datetime, timeout: float = 300) -> None:
    """Until no bench item due by `until` is queued or running (stragglers retried)."""
    query = text(
        "SELECT count(*) FROM queue_items WHERE stack = :stack AND scheduled_for <= :until "
        "AND status IN ('queued', 'running')"
    )
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            with database.read() as conn:
                if conn.execute(query, {"stack": STACK, "until": until}).scalar_one() == 0:
                    return
        except Exception:
            pass
        time.sleep(1.0)
    print(f"warning: items due by {until} still open after {timeout:.0f} s", file=sys.stderr)


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    cluster = Cluster(root / "cluster", sync=not args.async_)
    serves: list[subprocess.Popen[bytes]] = []
    poller: Poller | None = None
    database: Database | None = None
    try:
        cluster.start()
        create_database(cluster)
        url = multi_host_url(cluster)
        work = root / "cronplane"
        work.mkdir()
        target_file = work / "runs.tsv"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
        env |= {
            "CRONPLANE_DATABASE_URL": url,
            "CRONPLANE_PYTHON_TARGETS": "failover_target",
            "PYTHONPATH": os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(":"),
        }
        cli(env, "db", "upgrade")
        manifest(work / "app.yaml", target_file, args.schedules)
        cli(env, "--stack", STACK, "app", "install", str(work / "app.yaml"))
        token = cli(
            env, "token", "create", "--tenant", "default", "--role", "admin", "--name", "failover"
        )
        token = token.strip().splitlines()[-1]
        ports = [free_port() for _ in range(args.nodes)]
        serves = [start_serve(env, p, work / f"serve-{i}.log") for i, p in enumerate(ports)]
        poller = Poller(ports, token)
        poller.wait_ready(120)
        poller.start()
        database = Database(url)
        first = instant_after(db_now(database), 15)
        time.sleep(max(0.0, (first - db_now(database)).total_seconds()) + 1)
        switches: list[Switch] = []
        for number, kind in enumerate(plan(args.switchovers, args.failovers), 1):
            cluster.wait_healthy(180)
            time.sleep(args.spacing)
            at = time.time()
            if kind == "failover":
                # The standby falls behind from just before an instant's fires are committed
                # until its first runs are under way; then the primary dies.
                sleep_until_before_instant(database, 0.5 if args.stall else 0.15)
                at = time.time()
                if args.stall:
                    cluster.stall_replication()
                    time.sleep(args.stall)
            committed = recent_items(database, 15)  # what the primary has, just before
            old, _ = cluster.switchover() if kind == "switchover" else cluster.kill_primary()
            cluster.wait(
                lambda old=old: cluster.leader_name() not in (None, old), 120, "a new primary"
            )
            primary = time.time() - at  # patronictl returns once the switch is done
            cluster.wait_healthy(180)
            healthy = time.time() - at
            kept = still_there(database, committed)
            leader = cluster.leader()
            switch = Switch(
                number, kind, at, str(old), leader.name if leader else "?", primary, healthy
            )
            switch.committed, switch.kept = len(committed), kept
            switches.append(switch)
            print(switch.line(), flush=True)
        time.sleep(args.spacing)
        last = instant_after(db_now(database), -EVERY - 2)
        wait_drained(database, last)
        poller.stop()
        for process in serves:
            stop_serve(process)
        return failover_checks.report(
            database, target_file, first, last, switches, poller, sync=not args.async_
        )
    finally:
        if poller is not None:
            poller.stop()
        for process in serves:
            stop_serve(process)
        if database is not None:
            database.dispose()
        cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--async", dest="async_", action="store_true", help="asynchronous")
    parser.add_argument("--switchovers", type=int, default=10)
    parser.add_argument("--failovers", type=int, default=5)
    parser.add_argument("--schedules", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=2, help="cronplane serve nodes")
    parser.add_argument("--spacing", type=float, default=15.0, help="seconds after recovery")
    parser.add_argument(
        "--stall",
        type=float,
        default=1.5,
        help="seconds the primary's WAL senders are stopped before a failover's kill (0: none)",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    lacking = missing_tools()
    if lacking:
        sys.exit(f"missing: {', '.join(lacking)} (apt-get install -y patroni etcd-server)")
    root = Path(tempfile.mkdtemp(prefix="cronplane-failover-"))
    root.chmod(0o755)
    print(f"patroni_failover: {'asynchronous' if args.async_ else 'synchronous'}; {root}")
    result = run(args, root)
    failed = bool(result["failures"]) and not args.async_
    failover_checks.finish(
        root, result, failover_checks.render(result), failed=failed, keep=args.keep
    )


if __name__ == "__main__":
    main()
