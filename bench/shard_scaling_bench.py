"""Sharded dispatch, measured (issue 41): one burst on one shard against the same on two.

Run by hand when the machine is quiet (2 cores, shared; not in CI)::

    .venv/bin/python bench/shard_scaling_bench.py                 # 100,000 rows, 2 rounds
    .venv/bin/python bench/shard_scaling_bench.py --rows 20000 --rounds 1

Each configuration runs on fresh PostgreSQL servers of its own
(faults/pg_servers.py: initdb + pg_ctl on 127.0.0.1, fsync off, autovacuum
on, `track_commit_timestamp` on), each postmaster started under `taskset -c
CORE`, so it and every backend it forks run on that one core:

- **1 shard**: one server on core 0; the control database is the only shard
  (`default`); one `cronplane dispatcher --fire-ahead 0` process;
- **2 shards**: two servers, on cores 0 and 1; the control database on the
  first (shard `default`), shard `s1` on the second (`cronplane shard add`);
  two `cronplane dispatcher --fire-ahead 0` processes, the bench waiting until
  each leads one shard.

The same rows in both: tenants `a` and `b`, --rows / 2 daily schedules each,
all due at one instant T (seeded in SQL, then VACUUM ANALYZE); with 2 shards
`b` lives on s1 (`cronplane shard move b --to s1` before its rows are
seeded). The dispatchers run first, then the rows are seeded, due T a few
seconds later. Figures come from the queue items: a row's commit is its
transaction's commit timestamp (`pg_xact_commit_timestamp(xmin)`), its
lateness commit - T; fires/s = rows / (last commit - T). Per configuration,
and per shard with two.

The dispatcher processes are not pinned, and this machine has only the two
cores: with 1 shard they have core 1 to themselves (the server is on core
0), with 2 shards they share both cores with the servers, so the 2-shard
figure (and the ratio) is what the machine allows, below what a shard on a
server of its own with the dispatchers elsewhere would reach.
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

from sqlalchemy import text

import machine
from cronplane.store.database import Database
from dispatch_bench import percentile, reset, seed

# The servers are the fault scripts' (bench/faults/pg_servers.py).
sys.path.insert(0, str(Path(__file__).resolve().parent / "faults"))
import pg_servers
from patroni_cluster import _children, free_port

CRONPLANE = str(Path(sys.executable).with_name("cronplane"))
TENANTS = ("a", "b")
# Measured servers: commit times recorded; the rest as pg_servers sets them.
SETTINGS = {"track_commit_timestamp": "on", "autovacuum": "on"}


def cli(env: dict[str, str], *args: str) -> None:
    done = subprocess.run([CRONPLANE, *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"cronplane {' '.join(args)}: {done.stderr}")


def leaders(databases: dict[str, Database]) -> dict[str, str | None]:
    """Each shard's live lease holder's process (host:pid), None when unled."""
    found: dict[str, str | None] = {}
    for shard, database in databases.items():
        with database.read() as conn:
            row = conn.execute(
                text(
                    "SELECT holder FROM leases WHERE name = 'dispatcher' "
                    "AND expires_at > clock_timestamp()"
                )
            ).first()
        found[shard] = None if row is None else ":".join(row[0].split(":")[:2])
    return found


def balanced(databases: dict[str, Database], timeout: float) -> dict[str, str | None]:
    """Until every shard is led, each by another process (one dispatcher per shard)."""
    deadline = time.monotonic() + timeout
    while True:
        led = leaders(databases)
        if None not in led.values() and len(set(led.values())) == len(led):
            return led
        if time.monotonic() > deadline:
            raise RuntimeError(f"leadership not spread within {timeout:.0f} s: {led}")
        time.sleep(0.5)


def commits(database: Database, due: datetime) -> list[float]:
    """Each queue item's lateness: its commit timestamp minus `due` (seconds)."""
    with database.read() as conn:
        rows = conn.execute(
            text(
                "SELECT extract(epoch FROM pg_xact_commit_timestamp(xmin)) FROM queue_items "
                "WHERE scheduled_for = :due AND tenant IN ('a', 'b')"
            ),
            {"due": due},
        ).scalars()
        return [float(value) - due.timestamp() for value in rows]


def cpu_seconds(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each of `pids` so far (/proc; gone ones left out)."""
    tick = os.sysconf("SC_CLK_TCK")
    found = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[pid] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return found


def server_pids(servers: list[pg_servers.PgServer]) -> list[int]:
    """Every server's postmaster and the processes it forked (backends included)."""
    pids = []
    for server in servers:
        postmaster = server.postmaster_pid()
        if postmaster is not None:
            pids += [postmaster, *_children(postmaster)]
    return pids


def used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds spent between two readings (a process born meanwhile: all of its own)."""
    return sum(value - before.get(pid, 0.0) for pid, value in after.items())


def figures(lateness: list[float]) -> dict[str, float]:
    return {
        "rows": len(lateness),
        "fires_per_s": len(lateness) / max(lateness),
        "p50": percentile(lateness, 0.50),
        "p99": percentile(lateness, 0.99),
        "last": max(lateness),
    }


def burst(shards: int, rows: int, root: Path) -> dict[str, Any]:
    """One burst of `rows` on `shards` shards (1 or 2), on fresh servers; its figures."""
    servers = [
        pg_servers.PgServer(root / f"server{n}", free_port(), cpus=str(n), settings=SETTINGS)
        for n in range(shards)
    ]
    dispatchers: list[subprocess.Popen[bytes]] = []
    databases: dict[str, Database] = {}
    try:
        for server in servers:
            server.start()
        servers[0].create("cronplane")
        urls = {"default": servers[0].url("cronplane")}
        if shards == 2:
            servers[1].create("shard_s1")
            urls["s1"] = servers[1].url("shard_s1")
        env = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
        env["CRONPLANE_DATABASE_URL"] = urls["default"]
        cli(env, "db", "upgrade")
        databases = {"default": Database(urls["default"])}
        reset(databases["default"], TENANTS)
        places = {"a": "default", "b": "default"}
        if shards == 2:
            cli(env, "shard", "add", "s1", urls["s1"])
            cli(env, "shard", "move", "b", "--to", "s1")
            databases["s1"] = Database(urls["s1"])
            places["b"] = "s1"
        with (root / f"dispatchers-{shards}.log").open("ab") as log:
            dispatchers = [
                subprocess.Popen(
                    [CRONPLANE, "dispatcher", "--fire-ahead", "0"],
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                for _ in range(shards)
            ]
        led = balanced(databases, 60)
        control = databases["default"]
        # Seeding 50,000 rows and their VACUUM ANALYZE take a few seconds on one core.
        due = (control.now() + timedelta(seconds=4 + rows / 5_000)).replace(microsecond=0)
        for tenant in TENANTS:
            seed(databases[places[tenant]], 0, rows // 2, due, f"{tenant}-", tenant=tenant)
        ahead = (due - control.now()).total_seconds()
        if ahead < 1.0:
            raise RuntimeError(f"seeding ended {ahead:.1f} s before the instant: too late")
        time.sleep(ahead - 0.5)  # CPU is read from just before the instant
        dispatcher_cpu = cpu_seconds([p.pid for p in dispatchers])
        server_cpu = cpu_seconds(server_pids(servers))
        deadline = time.monotonic() + ahead + 300
        while time.monotonic() < deadline:
            done = 0
            for database in databases.values():
                with database.read() as conn:
                    # The bench's tenants: housekeeping may fall due at the same instant.
                    query = text(
                        "SELECT count(*) FROM queue_items "
                        "WHERE scheduled_for = :due AND tenant IN ('a', 'b')"
                    )
                    done += conn.execute(query, {"due": due}).scalar_one()
            if done == rows:
                break
            time.sleep(0.5)
        else:
            raise RuntimeError(f"only {done} of {rows} rows fired within 300 s of the instant")
        dispatcher_cpu = used(dispatcher_cpu, cpu_seconds([p.pid for p in dispatchers]))
        server_cpu = used(server_cpu, cpu_seconds(server_pids(servers)))
        per_shard = {shard: commits(database, due) for shard, database in databases.items()}
        everything = [value for values in per_shard.values() for value in values]
        return {
            "shards": shards,
            "leaders": led,
            "ahead_s": ahead,
            "all": figures(everything),
            # Until every row was committed and counted (the counting's own queries included).
            "dispatcher_cpu_s": dispatcher_cpu,
            "server_cpu_s": server_cpu,
            "per_shard": {shard: figures(values) for shard, values in per_shard.items()},
        }
    finally:
        for process in dispatchers:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGINT)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
        for database in databases.values():
            database.dispose()
        for server in servers:
            server.stop()


def line(label: str, f: dict[str, float], cpu: str = "") -> str:
    return (
        f"| {label} | {f['rows']:,} | {f['fires_per_s']:,.0f} | {f['p50']:.2f} | "
        f"{f['p99']:.2f} | {f['last']:.2f} | {cpu} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000, help="rows due at the instant")
    parser.add_argument("--rounds", type=int, default=2, help="1 shard then 2, this many times")
    args = parser.parse_args()
    lacking = pg_servers.missing()
    if lacking or os.cpu_count() is None or (os.cpu_count() or 0) < 2:
        sys.exit(f"missing: {lacking or 'a second core'}")
    print(machine.header("shard scaling bench"))
    print(f"# uptime: {subprocess.run(['uptime'], capture_output=True, text=True).stdout.strip()}")
    print(
        "\n| configuration | rows | fires/s | lateness p50 (s) | p99 (s) | last (s) "
        "| CPU s: dispatchers / servers |"
    )
    print("|---|---:|---:|---:|---:|---:|---|")
    results: list[dict[str, Any]] = []
    for round_ in range(1, args.rounds + 1):
        for shards in (1, 2):
            with tempfile.TemporaryDirectory(prefix="cronplane-shard-bench-") as folder:
                root = Path(folder)
                root.chmod(0o755)
                result = burst(shards, args.rows, root)
            results.append(result)
            label = f"round {round_}, {shards} shard{'s' if shards > 1 else ''}"
            cpu = f"{result['dispatcher_cpu_s']:.1f} / {result['server_cpu_s']:.1f}"
            print(line(label, result["all"], cpu), flush=True)
            if shards == 2:
                for shard, f in result["per_shard"].items():
                    print(line(f"round {round_}, 2 shards: {shard}'s rows", f), flush=True)
    one = [r["all"]["fires_per_s"] for r in results if r["shards"] == 1]
    two = [r["all"]["fires_per_s"] for r in results if r["shards"] == 2]
    ratios = ", ".join(f"{b / a:.2f}" for a, b in zip(one, two, strict=True))
    print(f"\n2 shards / 1 shard, fires/s, per round: {ratios}")
    print(f"# load average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"# {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")


if __name__ == "__main__":
    main()
