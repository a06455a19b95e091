"""Shards under faults (issue 41): leaders killed and frozen while tenants move between shards.

Run by hand for a few minutes, or short by tests/dispatch/test_shard_chaos.py
(CI). Needs PostgreSQL's server binaries (pg_servers.py) and, as root,
`runuser`. From the checkout::

    .venv/bin/python bench/faults/shard_chaos.py                # 240 s of faults
    .venv/bin/python bench/faults/shard_chaos.py --seconds 75   # what CI runs

Everything is on 127.0.0.1, on free ports, in a temporary directory (kept and
named when a check fails, or with --keep):

1. two PostgreSQL servers of its own, A and B (initdb + pg_ctl); the control
   database `cronplane` on A, itself shard `default`, and three shards
   registered with `cronplane shard add`: s1 on A, s2 and s3 on B (two
   shards per server);
2. --tenants tenants t1, t2, … spread over the four shards (`cronplane shard
   move` before anything is installed), each with an app of stack `chaos`:
   schedules `every 1, 2, 3, 5, 7 and 10 seconds` (t1 also --heavy schedules
   every 5 s), whose `python:` target (failover_target.py) appends one line
   per run to a file;
3. --nodes nodes, each a `cronplane dispatcher --ttl T` and a `cronplane
   worker --threads 2` process, every one over all four shards;
4. for --seconds, in turn: SIGKILL of the dispatcher of the node leading the
   most shards (its worker process is left: a worker killed mid-run leaves
   its claimed items to the 300 s item lease, the worker's contract and not
   the shards'), that node's dispatcher started again, then SIGSTOP of both
   processes of a leading node for --stop-for seconds (3 TTLs) and SIGCONT;
   meanwhile `cronplane shard move` moves a tenant to another shard every
   --move-every seconds (every other one to the other server), and every
   third move is SIGKILLed part way (in turn: just after the rows left the
   old shard, just after the map said moving, at a random moment) and run
   again (the resume). Each shard's lease is read every 0.25 s (who leads it, and for
   how long no one did);
5. then, once every occurrence up to the last watched instant is decided and
   run: the accounting of failover_checks.py over all four databases and the
   target's file (every occurrence fired once, folded into a later fire, or
   skipped with its ledger event; no duplicate, none missing; every item
   with its fired event; every line with its item), each schedule's rows on
   exactly the shard the map names, and no move left half done.

It prints a summary (report.json in the directory) and exits 1 on any
failure, 3 when PostgreSQL's server binaries are missing. Figures: docs/operations.md, "Sharded dispatch".
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import failover_checks
import pg_servers
import psycopg
from patroni_cluster import free_port
from pg_servers import PgServer
from sqlalchemy import text

from cronplane import events as ev
from cronplane.store.database import Database

HERE = Path(__file__).resolve().parent
CRONPLANE = str(Path(sys.executable).with_name("cronplane"))
STACK = "chaos"
PERIODS = (1, 2, 3, 5, 7, 10)
HEAVY_EVERY = 5
# The exit status when this machine lacks what the servers need (the test then skips, or
# fails under CI: tests/required_services.py).
MISSING = 3
# When an interrupted move is killed (Mover.interrupted).
TRIGGERS = ("left", "moving", "timed")
# Where each shard lives: (shard, server, database); `default` is the control database.
LAYOUT = (
    ("default", 0, "cronplane"),
    ("s1", 0, "shard_s1"),
    ("s2", 1, "shard_s2"),
    ("s3", 1, "shard_s3"),
)


def cli(env: dict[str, str], *args: str, timeout: float = 180) -> str:
    done = subprocess.run(
        [CRONPLANE, *args], env=env, capture_output=True, text=True, check=False, timeout=timeout
    )
    if done.returncode != 0:
        raise RuntimeError(f"cronplane {' '.join(args)}: {done.returncode}\n{done.stderr}")
    return done.stdout


def manifest(path: Path, tenant: str, target_file: Path, heavy: int) -> None:
    """The tenant's app: one schedule per period (and the heavy ones); JSON is YAML."""
    every = {f"{tenant}-every{p}": p for p in PERIODS}
    every |= {f"{tenant}-h{n:03d}": HEAVY_EVERY for n in range(heavy)}
    failover_checks.write_app(path, target_file, every, STACK)


@dataclass
class NodeProcesses:
    """One node: a dispatcher process and a worker process."""

    number: int
    env: dict[str, str]
    logs: Path
    ttl: float
    dispatcher: subprocess.Popen[bytes] | None = None
    worker: subprocess.Popen[bytes] | None = None
    dispatcher_pids: list[int] = field(default_factory=list)

    def _spawn(self, kind: str, *args: str) -> subprocess.Popen[bytes]:
        with (self.logs / f"node{self.number}-{kind}.log").open("ab") as out:
            return subprocess.Popen(
                [CRONPLANE, kind, *args],
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def start_dispatcher(self) -> None:
        self.dispatcher = self._spawn("dispatcher", "--ttl", str(self.ttl), "-v")
        self.dispatcher_pids.append(self.dispatcher.pid)

    def start_worker(self) -> None:
        self.worker = self._spawn("worker", "--threads", "2")

    def running(self) -> list[subprocess.Popen[bytes]]:
        return [p for p in (self.dispatcher, self.worker) if p is not None and p.poll() is None]

    def signal(self, signum: int) -> None:
        for process in self.running():
            os.killpg(process.pid, signum)

    def stop(self) -> None:
        self.signal(signal.SIGCONT)
        self.signal(signal.SIGINT)
        for process in self.running():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


class LeaseWatch:
    """Every 0.25 s, each shard's dispatcher lease: which node leads it (None: no one)."""

    def __init__(self, databases: dict[str, Database], nodes: list[NodeProcesses]) -> None:
        self.databases = databases
        self.nodes = nodes
        self.samples: list[tuple[float, str, int | None, int | None]] = []  # t, shard, node, term
        self.current: dict[str, int | None] = dict.fromkeys(databases)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def node_of(self, holder: str | None) -> int | None:
        if not holder:
            return None
        try:
            pid = int(holder.split("/")[0].split(":")[1])
        except (IndexError, ValueError):
            return None
        return next((n.number for n in self.nodes if pid in n.dispatcher_pids), None)

    def read(self) -> None:
        query = text(
            "SELECT holder, term, expires_at > clock_timestamp() FROM leases WHERE name = 'dispatcher'"
        )
        for shard, database in self.databases.items():
            try:
                with database.read() as conn:
                    row = conn.execute(query).first()
            except Exception:  # a server busy past the pool's wait: no sample this time
                continue
            node = self.node_of(row[0]) if row is not None and row[2] else None
            self.current[shard] = node
            self.samples.append((time.time(), shard, node, row[1] if row is not None else None))

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            self.read()

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def led_by(self, node: int) -> list[str]:
        return sorted(shard for shard, n in self.current.items() if n == node)

    def wait(self, check: Any, timeout: float) -> float | None:
        """Seconds until `check()` holds (None: not within `timeout`)."""
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if check():
                return time.monotonic() - started
            time.sleep(0.1)
        return None

    def summary(self, since: float) -> dict[str, Any]:
        """Per shard: the longest stretch unled, the terms seen, the nodes that led it."""
        by_shard: defaultdict[str, list[tuple[float, int | None, int | None]]] = defaultdict(list)
        for at, shard, node, term in self.samples:
            if at >= since:
                by_shard[shard].append((at, node, term))
        out: dict[str, Any] = {}
        for shard, samples in sorted(by_shard.items()):
            longest, began = 0.0, None
            for at, node, _ in samples:
                if node is None and began is None:
                    began = at
                elif node is not None and began is not None:
                    longest, began = max(longest, at - began), None
            terms = {term for _, _, term in samples if term is not None}
            out[shard] = {
                "longest_unled_s": round(longest, 2),
                "unled_at_end": began is not None,
                "terms": len(terms),
                "leaders": sorted({n for _, n, _ in samples if n is not None}),
            }
        return out


@dataclass
class Faults:
    """What the node faults did and how quickly the shards were led again."""

    log: list[dict[str, Any]] = field(default_factory=list)

    def add(self, **entry: Any) -> None:
        self.log.append(entry)
        print(
            "  "
            + ", ".join(
                f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in entry.items()
            ),
            flush=True,
        )


class Mover:
    """`cronplane shard move` of one tenant after another, to a random other shard."""

    def __init__(
        self,
        env: dict[str, str],
        databases: dict[str, Database],
        places: dict[str, str],
        every: float,
        rng: random.Random,
    ) -> None:
        self.env = env
        self.databases = databases
        self.places = places  # tenant -> shard (the mover is the only one moving)
        self.every = every
        self.rng = rng
        self.counts: Counter[str] = Counter()
        self.seconds: list[float] = []  # each uninterrupted move's time, start to exit
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server = {shard: server for shard, server, _ in LAYOUT}

    def move(self, tenant: str, to: str) -> None:
        """Run the move until it succeeds (a failed run is retried: a move resumes)."""
        for attempt in range(5):
            done = subprocess.run(
                [CRONPLANE, "shard", "move", tenant, "--to", to, "--json"],
                env=self.env,
                capture_output=True,
                text=True,
                timeout=180,
            )
            if done.returncode == 0:
                return
            self.counts["move runs that failed (retried)"] += 1
            self.errors.append(
                f"{tenant} -> {to} (run {attempt + 1}): {done.stderr.strip()[-300:]}"
            )
            time.sleep(1.0)
        raise RuntimeError(f"moving {tenant} to {to} failed 5 times")

    def step_reached(self, tenant: str, came_from: str, to: str) -> str:
        """How far a killed move got (service.shards' five steps), read from the records."""
        with self.databases["default"].read() as conn:
            row = conn.execute(
                text("SELECT shard, epoch, moving_to FROM tenant_shards WHERE tenant = :t"),
                {"t": tenant},
            ).first()
        if row is None or (row.moving_to is None and row.shard == came_from):
            return "killed before it began"
        if row.moving_to is None:
            return "killed after the map named the new shard"
        record = text(
            "SELECT count(*) FROM tenant_moves WHERE tenant = :t AND epoch = :e AND direction = :d"
        )
        epoch = row.epoch + 1
        with self.databases[came_from].read() as conn:
            left = conn.execute(record, {"t": tenant, "e": epoch, "d": "out"}).scalar_one()
        with self.databases[to].read() as conn:
            landed = conn.execute(record, {"t": tenant, "e": epoch, "d": "in"}).scalar_one()
        if landed:
            return "killed after the rows landed, before the map named the new shard"
        if left:
            return "killed with the rows left and not landed (no shard fires them)"
        return "killed with the map saying moving, before the rows left"

    def interrupted(self, tenant: str, came_from: str, to: str, trigger: str) -> None:
        """Start the move, SIGKILL it part way, then run it again (it resumes).

        `trigger`: "timed" kills at a random moment of the command's usual
        time; "moving" as soon as the map says the tenant is moving (step 1
        committed); "left" as soon as the old shard recorded the rows leaving
        (step 2 committed: then no shard holds them until the resume lands them).
        """
        with self.databases["default"].read() as conn:
            epoch = conn.execute(
                text("SELECT epoch FROM tenant_shards WHERE tenant = :t"), {"t": tenant}
            ).scalar()
        epoch = (epoch or 0) + 1
        watched, query = {
            "moving": (
                "default",
                "SELECT 1 FROM tenant_shards WHERE tenant = %s AND moving_to = %s",
            ),
            "left": (
                came_from,
                "SELECT 1 FROM tenant_moves WHERE tenant = %s AND epoch = %s AND direction = 'out'",
            ),
        }.get(trigger, ("default", ""))
        typical = sorted(self.seconds)[len(self.seconds) // 2] if self.seconds else 2.0
        process = subprocess.Popen(
            [CRONPLANE, "shard", "move", tenant, "--to", to, "--json"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if trigger == "timed":
            # Most of a move's time is the command's start-up: kill in its second half.
            time.sleep(self.rng.uniform(0.5, 1.0) * typical)
        else:
            plain = self.databases[watched].url.replace("postgresql+psycopg://", "postgresql://")
            with psycopg.connect(plain, autocommit=True) as conn:
                value = to if trigger == "moving" else epoch
                while (
                    process.poll() is None
                    and conn.execute(query, (tenant, value)).fetchone() is None
                ):
                    time.sleep(0.001)
        finished = process.poll() is not None
        process.kill()
        process.wait()
        reached = (
            "finished before the kill" if finished else self.step_reached(tenant, came_from, to)
        )
        self.counts[f"killed ({trigger}): {reached}, then resumed"] += 1
        self.move(tenant, to)

    def _run(self) -> None:
        tenants = sorted(self.places)
        n = 0
        while not self._stop.wait(self.every):
            tenant = tenants[n % len(tenants)]
            came_from = self.places[tenant]
            others = [shard for shard, _, _ in LAYOUT if shard != came_from]
            # Every other move crosses to the other server; the others stay on the same one.
            across = n % 2 == 0
            to = self.rng.choice(
                [s for s in others if (self._server[s] != self._server[came_from]) == across]
            )
            started = time.monotonic()
            try:
                if n % 3 == 2:  # every third move is killed part way, by turns of trigger
                    trigger = TRIGGERS[(n // 3) % len(TRIGGERS)]
                    self.interrupted(tenant, came_from, to, trigger)
                else:
                    self.move(tenant, to)
                    self.seconds.append(time.monotonic() - started)
            except Exception as error:
                self.errors.append(f"{tenant} -> {to}: {error}")
                self.counts["moves abandoned"] += 1
                n += 1
                continue
            self.places[tenant] = to
            self.counts["moves"] += 1
            if self._server[to] != self._server[came_from]:
                self.counts["moves across servers"] += 1
            n += 1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def db_now(database: Database) -> datetime:
    return database.now()


def wait_settled(databases: dict[str, Database], last: datetime, timeout: float) -> list[str]:
    """Until every watched row is decided past `last` and every item due by then finished;
    what is still open after `timeout` (empty: nothing)."""
    due = text(
        "SELECT count(*) FROM schedule_state t JOIN schedules s ON s.id = t.id "
        "WHERE s.stack = :s AND t.enabled AND t.next_run <= :last"
    )
    open_items = text(
        "SELECT count(*) FROM queue_items WHERE stack = :s AND status IN ('queued', 'running') "
        "AND scheduled_for <= :last"
    )
    started = time.monotonic()
    while True:
        left = []
        for shard, database in databases.items():
            with database.read() as conn:
                undecided = conn.execute(due, {"s": STACK, "last": last}).scalar_one()
                waiting = conn.execute(open_items, {"s": STACK, "last": last}).scalar_one()
            if undecided or waiting:
                left.append(
                    f"{shard}: {undecided} rows not decided by {last}, {waiting} items open"
                )
        if not left or time.monotonic() - started > timeout:
            return left
        time.sleep(1.0)


def placement_checks(
    databases: dict[str, Database], control: Database
) -> tuple[list[str], dict[str, str]]:
    """Each watched schedule's row on exactly one shard, the one its tenant's map names; no
    move left half done. Returns the failures and the map."""
    failures: list[str] = []
    with control.read() as conn:
        rows = conn.execute(text("SELECT tenant, shard, moving_to FROM tenant_shards")).all()
    mapped = {tenant: shard for tenant, shard, _ in rows}
    for tenant, shard, moving_to in rows:
        if moving_to is not None:
            failures.append(f"tenant {tenant} left moving from {shard} to {moving_to}")
    where: defaultdict[str, list[str]] = defaultdict(list)
    tenant_of: dict[str, str] = {}
    for shard, database in databases.items():
        with database.read() as conn:
            for id_, tenant in conn.execute(
                text("SELECT id::text, tenant FROM schedules WHERE stack = :s"), {"s": STACK}
            ):
                where[id_].append(shard)
                tenant_of[id_] = tenant
    for id_, shards in where.items():
        expected = mapped.get(tenant_of[id_], "default")
        if shards != [expected]:
            failures.append(
                f"schedule {id_} of {tenant_of[id_]} on {shards}, the map says {expected}"
            )
    return failures, mapped


def run(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    rng = random.Random(args.seed)
    ports = args.ports or [free_port(), free_port()]
    servers = [PgServer(root / f"server{n}", port) for n, port in enumerate(ports)]
    nodes: list[NodeProcesses] = []
    databases: dict[str, Database] = {}
    watch: LeaseWatch | None = None
    mover: Mover | None = None
    try:
        for server in servers:
            server.start()
        for _, index, name in LAYOUT:
            servers[index].create(name)
        urls = {shard: servers[index].url(name) for shard, index, name in LAYOUT}
        work = root / "cronplane"
        work.mkdir()
        target_file = work / "runs.tsv"
        env = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
        env |= {
            "CRONPLANE_DATABASE_URL": urls["default"],
            "CRONPLANE_PYTHON_TARGETS": "failover_target",
            "PYTHONPATH": os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")]).rstrip(":"),
        }
        cli(env, "db", "upgrade")
        for shard, url in urls.items():
            if shard != "default":
                cli(env, "shard", "add", shard, url)
        tenants = [f"t{n}" for n in range(1, args.tenants + 1)]
        places: dict[str, str] = {}
        for n, tenant in enumerate(tenants):
            shard = LAYOUT[n % len(LAYOUT)][0]
            if shard != "default":
                cli(env, "shard", "move", tenant, "--to", shard)
            places[tenant] = shard
            path = work / f"{tenant}.json"
            manifest(path, tenant, target_file, args.heavy if n == 0 else 0)
            cli(env, "--tenant", tenant, "--stack", STACK, "app", "install", str(path))
        print(f"  placed: {places}", flush=True)
        databases = {shard: Database(url) for shard, url in urls.items()}
        control = databases["default"]
        nodes = [NodeProcesses(n, env, work, args.ttl) for n in range(1, args.nodes + 1)]
        for node in nodes:
            node.start_worker()
            node.start_dispatcher()
        watch = LeaseWatch(databases, nodes)
        watch.start()
        every_shard_led = lambda: None not in watch.current.values()  # noqa: E731
        if watch.wait(every_shard_led, 60) is None:
            raise RuntimeError("the shards were not all led within 60 s of the nodes' start")
        first = datetime.fromtimestamp(
            -(-(db_now(control) + timedelta(seconds=2)).timestamp() // 10) * 10, UTC
        )
        time.sleep(max(0.0, (first - db_now(control)).total_seconds()))
        began = time.time()
        print(
            f"  first watched instant {first.isoformat()}; faults for {args.seconds:.0f} s",
            flush=True,
        )
        mover = Mover(env, databases, places, args.move_every, rng)
        mover.start()
        faults = Faults()
        deadline = time.monotonic() + args.seconds
        settle = max(2 * args.ttl, 5.0)
        while time.monotonic() + args.stop_for + 3 * settle < deadline:
            # 1. SIGKILL the dispatcher of the node leading the most shards; the others take over.
            # Ties go to the node struck least so far: over a run every node is hit.
            struck = Counter(entry["node"] for entry in faults.log)
            leading = max(nodes, key=lambda n: (len(watch.led_by(n.number)), -struck[n.number]))
            shards = watch.led_by(leading.number)
            assert leading.dispatcher is not None
            os.killpg(leading.dispatcher.pid, signal.SIGKILL)
            leading.dispatcher.wait()
            taken = watch.wait(
                lambda shards=shards, leading=leading: all(
                    watch.current[s] not in (None, leading.number) for s in shards
                ),
                60,
            )
            faults.add(
                fault="SIGKILL dispatcher",
                node=leading.number,
                led=shards,
                taken_over_after_s=taken,
            )
            time.sleep(settle)
            # 2. That node's dispatcher again: leadership spreads back to it.
            leading.start_dispatcher()
            spread = watch.wait(lambda leading=leading: bool(watch.led_by(leading.number)), 60)
            faults.add(fault="restart dispatcher", node=leading.number, leads_again_after_s=spread)
            time.sleep(settle)
            # 3. SIGSTOP a leading node (dispatcher and worker) past the TTL, then SIGCONT.
            candidates = [n for n in nodes if watch.led_by(n.number)]
            struck = Counter(entry["node"] for entry in faults.log)
            frozen = min(candidates, key=lambda n: (struck[n.number], rng.random()))
            shards = watch.led_by(frozen.number)
            frozen.signal(signal.SIGSTOP)
            at = time.monotonic()
            taken = watch.wait(
                lambda shards=shards, frozen=frozen: all(
                    watch.current[s] not in (None, frozen.number) for s in shards
                ),
                args.stop_for,
            )
            time.sleep(max(0.0, args.stop_for - (time.monotonic() - at)))
            frozen.signal(signal.SIGCONT)
            faults.add(
                fault="SIGSTOP node",
                node=frozen.number,
                led=shards,
                stopped_s=time.monotonic() - at,
                taken_over_after_s=taken,
            )
            time.sleep(settle)
        mover.stop()
        print(f"  moves: {dict(mover.counts)}", flush=True)
        time.sleep(max(0.0, deadline - time.monotonic()))
        # Every occurrence up to `last` is decided and run before the checks.
        last = db_now(control) - timedelta(seconds=2)
        open_left = wait_settled(databases, last, args.drain_timeout)
        leadership = watch.summary(began)
        watch.stop()
        watch = None
        for node in nodes:
            node.stop()
        ledger = failover_checks.Ledger()
        for shard, database in databases.items():
            ledger.read(database, STACK, shard)
        lines = failover_checks._lines(target_file)
        checked = failover_checks.account(ledger, lines, first, last)
        placed, mapped = placement_checks(databases, control)
        failures = checked.failures + placed + [f"still open: {left}" for left in open_left]
        for shard, seen in leadership.items():
            if seen["unled_at_end"]:
                failures.append(f"shard {shard} had no leader at the end")
        fenced = sum(
            path.read_text(errors="replace").count(" fenced: ")
            for path in work.glob("node*-dispatcher.log")
        )
        by_shard = Counter(where for _, _, _, where in ledger.items)
        in_window = [r for r in ledger.recorded if first <= r[1] <= last]
        skips = Counter(r[2] for r in in_window if r[2] in failover_checks.SKIPS)
        # How late each fire was decided (the ledger's late_ms), in seconds.
        late = sorted(
            (r[3] if isinstance(r[3], dict) else json.loads(r[3]))["late_ms"] / 1000
            for r in in_window
            if r[2] == ev.SCHEDULE_FIRED.text
        )
        return {
            "window": [first.isoformat(), last.isoformat()],
            "seconds": round(last.timestamp() - first.timestamp()),
            "schedules": len(ledger.periods),
            "tenants": len(tenants),
            "map": mapped,
            "occurrences": dict(checked.outcome),
            "items_by_shard": dict(by_shard),
            "skips_by_code": dict(skips),
            "fire_late_s": {
                "p50": late[len(late) // 2] if late else None,
                "p99": late[int(len(late) * 0.99)] if late else None,
                "max": late[-1] if late else None,
            },
            "lines": len(lines),
            "lines_by_pid": len({line[2] for line in lines}),
            "lines_item_gone": checked.lost_lines,
            "faults": faults.log,
            "moves": dict(mover.counts),
            "move_seconds": _p50_max(mover.seconds),
            "move_errors": mover.errors[:20],
            "leadership": leadership,
            "fenced_log_lines": fenced,
            "failures": failures,
        }
    finally:
        if mover is not None:
            mover.stop()
        if watch is not None:
            watch.stop()
        for node in nodes:
            node.stop()
        for database in databases.values():
            database.dispose()
        for server in servers:
            server.stop()


def _p50_max(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    return f"{ordered[len(ordered) // 2]:.1f} / {ordered[-1]:.1f}"


def render(result: dict[str, Any]) -> str:
    """The summary: the accounting, the faults, the moves, leadership, failures."""
    occurrences = result["occurrences"]
    total = sum(occurrences.values())
    out = [
        f"window {result['window'][0]} .. {result['window'][1]} ({result['seconds']} s), "
        f"{result['schedules']} schedules of {result['tenants']} tenants; at the end {result['map']}",
        f"occurrences: {total}: " + ", ".join(f"{k} {v}" for k, v in sorted(occurrences.items())),
        "skipped by code: "
        + (", ".join(f"{k} {v}" for k, v in sorted(result["skips_by_code"].items())) or "none"),
        "a fire's lateness (ledger late_ms) p50/p99/max: "
        + " / ".join(f"{v:.2f}" if v is not None else "-" for v in result["fire_late_s"].values())
        + " s",
        "items by shard: "
        + ", ".join(f"{k} {v}" for k, v in sorted(result["items_by_shard"].items())),
        f"target lines: {result['lines']} from {result['lines_by_pid']} worker processes, "
        f"{result['lines_item_gone']} for an item no database has",
        "moves: " + ", ".join(f"{k} {v}" for k, v in sorted(result["moves"].items())),
        f"a move's time (the command, start-up included) p50/max {result['move_seconds']} s",
        f"dispatcher log lines 'fenced': {result['fenced_log_lines']}",
    ]
    for fault in result["faults"]:
        out.append("fault: " + ", ".join(f"{k}={v}" for k, v in fault.items()))
    for shard, seen in result["leadership"].items():
        out.append(
            f"shard {shard}: led by nodes {seen['leaders']}, {seen['terms']} terms, "
            f"longest without a leader {seen['longest_unled_s']} s"
        )
    out.append(f"failures: {len(result['failures'])}")
    out.extend("  " + line for line in result["failures"][:40])
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=240.0, help="how long the faults go on")
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--tenants", type=int, default=6)
    parser.add_argument("--heavy", type=int, default=100, help="t1's extra schedules every 5 s")
    parser.add_argument("--ttl", type=float, default=3.0, help="the dispatchers' lease TTL (s)")
    parser.add_argument("--stop-for", type=float, default=None, help="SIGSTOP length [3 TTLs]")
    parser.add_argument("--move-every", type=float, default=3.0, help="seconds between moves")
    parser.add_argument("--drain-timeout", type=float, default=120.0)
    parser.add_argument("--ports", type=int, nargs=2, default=None, help="the two servers' ports")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args()
    args.stop_for = args.stop_for or 3 * args.ttl
    lacking = pg_servers.missing()
    if lacking:
        print(f"missing: {lacking}", file=sys.stderr)
        sys.exit(MISSING)
    # SIGTERM (the test's timeout) unwinds like an error: nodes and servers are stopped.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    root = Path(tempfile.mkdtemp(prefix="cronplane-shards-"))
    root.chmod(0o755)
    print(
        f"shard_chaos: {args.nodes} nodes, 4 shards on 2 servers, TTL {args.ttl:g} s; {root}",
        flush=True,
    )
    started = time.monotonic()
    try:
        result = run(args, root)
    except Exception:
        print(f"kept: {root}")
        raise
    result["run_seconds"] = round(time.monotonic() - started)
    shown = f"{render(result)}\nrun took {result['run_seconds']} s"
    failover_checks.finish(root, result, shown, failed=bool(result["failures"]), keep=args.keep)


if __name__ == "__main__":
    main()
