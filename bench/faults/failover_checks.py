"""What patroni_failover.py watches and checks: the API poller, the switches, the ledger.

The accounting (`Ledger`, `account`; shard_chaos.py's too, over every shard's
database), per schedule and per occurrence of its `every N seconds` from the
first watched instant to the last (docs/operations.md, "Across a Patroni
failover"):

- **fired once**: one queue item, one fired event (V200610SCHTRG), one line
  in the target's file;
- **folded**: no item of its own, and a later fire of the schedule whose
  event says it coalesced this many occurrences (`detail.coalesced`);
- **skipped**: no item, and a skip event for that instant, or a later one
  that coalesced it (the ledger says why);
- anything else is a failure: **missing** (nothing, or nothing recorded),
  **fired twice** (two items or two fired events), **ran twice** (two lines),
  **not run** (an item and no line).

Besides: a line whose item is not in the database is a committed fire lost
(it ran, then the database forgot it); an item committed before a switch
and gone after it, too; and every item has exactly one fired event beside it
(same database, same item id), every fired event its item.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NoReturn

from sqlalchemy import text

from cronplane import events as ev
from cronplane.store.database import Database

EVERY = 10
# An occurrence due from EVERY s before a switch to NEAR s after it is "near" it: its
# lateness is the switch's (the cluster is healthy again within about 10 s).
NEAR = 20
STACK = "failover"
SKIPS = {
    code.text
    for name, code in vars(ev).items()
    if name.startswith("SKIPPED_") and hasattr(code, "text")
}


@dataclass
class Switch:
    """One switchover or failover and how the cluster came back."""

    number: int
    kind: str
    at: float  # epoch seconds the action began
    old: str
    new: str
    primary_after: float  # seconds until a primary answered
    healthy_after: float  # seconds until the standby streamed again
    committed: int = 0  # bench items committed in the 15 s before it
    kept: int = 0  # of them, still there after it
    gap: float | None = None
    late: float | None = None

    def line(self) -> str:
        return (
            f"{self.number:2d} {self.kind:10s} {self.old} -> {self.new}: primary after "
            f"{self.primary_after:.1f} s, healthy after {self.healthy_after:.1f} s, "
            f"kept {self.kept}/{self.committed} items committed just before"
        )


@dataclass
class Poller:
    """GET /readyz and a schedule listing on every node every 0.25 s; every answer kept."""

    ports: list[int]
    token: str
    answers: list[tuple[float, int, str, int, str]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def paths(self) -> list[str]:
        return ["/readyz", "/api/v1/tenants/default/schedules?limit=1"]

    def get(self, port: int, path: str) -> tuple[int, str]:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", headers={"Authorization": f"Bearer {self.token}"}
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as answer:
                return answer.status, ""
        except urllib.error.HTTPError as error:
            body = error.read()
            try:
                return error.code, str(json.loads(body).get("code", ""))
            except (ValueError, AttributeError):
                return error.code, body[:80].decode(errors="replace")
        except OSError as error:
            return 0, type(error).__name__

    def wait_ready(self, timeout: float) -> None:
        started = time.monotonic()
        while any(self.get(p, "/readyz")[0] != 200 for p in self.ports):
            if time.monotonic() - started > timeout:
                raise RuntimeError("the serve nodes did not get ready")
            time.sleep(0.5)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            for port in self.ports:
                for path in self.paths():
                    status, code = self.get(port, path)
                    self.answers.append((time.time(), port, path.split("?")[0], status, code))


def _lines(path: Path) -> list[tuple[str, datetime, str, str, float]]:
    found = []
    for raw in path.read_text().splitlines() if path.exists() else []:
        name, when, pid, item, _attempt, ran_at = raw.split("\t")
        found.append((name, datetime.fromisoformat(when), pid, item, float(ran_at)))
    return found


def period(cron: str) -> int:
    """Seconds between a watched schedule's occurrences: its cron is `@every Ns`."""
    if not (cron.startswith("@every ") and cron.endswith("s") and cron[7:-1].isdigit()):
        raise ValueError(f"a watched schedule runs `every N seconds`, not {cron!r}")
    return int(cron[7:-1])


@dataclass
class Ledger:
    """What the databases hold of the watched stack: schedules, items and ledger events.

    Read from one database (patroni_failover.py) or from every shard's
    (shard_chaos.py: a moved tenant's schedules keep their ids, and their
    history stays on the shards it passed through); `where` names the
    database a row came from.
    """

    periods: dict[str, int] = field(default_factory=dict)  # schedule name -> seconds
    names: dict[str, str] = field(default_factory=dict)  # schedule id -> name
    # (schedule id, scheduled_for, item id, where)
    items: list[tuple[str, datetime, str, str]] = field(default_factory=list)
    # (schedule id, scheduled_for, code, detail, item id, where)
    recorded: list[tuple[str, datetime, str, Any, str | None, str]] = field(default_factory=list)

    def read(self, database: Database, stack: str, where: str = "") -> None:
        """Add what `database` holds of `stack`."""
        with database.read() as conn:
            for id_, name, cron in conn.execute(
                text("SELECT id::text, name, cron FROM schedules WHERE stack = :s"), {"s": stack}
            ):
                self.names[id_] = name
                self.periods[name] = period(cron)
            items = conn.execute(
                text(
                    "SELECT schedule_id::text, scheduled_for, id::text FROM queue_items "
                    "WHERE stack = :s AND schedule_id IS NOT NULL"
                ),
                {"s": stack},
            ).all()
            recorded = conn.execute(
                text(
                    "SELECT schedule_id::text, scheduled_for, code, detail, item_id::text "
                    "FROM events WHERE stack = :s AND schedule_id IS NOT NULL "
                    "AND scheduled_for IS NOT NULL"
                ),
                {"s": stack},
            ).all()
        self.items += [(r[0], r[1], r[2], where) for r in items]
        self.recorded += [(r[0], r[1], r[2], r[3], r[4], where) for r in recorded]

    def name(self, schedule_id: str) -> str:
        return self.names.get(schedule_id, f"?{schedule_id}")


@dataclass
class Accounting:
    """Every watched occurrence classified, and what failed."""

    outcome: Counter[str]
    failures: list[str]
    instants: int  # distinct instants in the window
    lost_lines: int  # target lines whose item no database has


def _instants(first: datetime, last: datetime, every: int) -> list[datetime]:
    """The occurrences of `@every {every}s` (epoch-anchored) from `first` to `last`."""
    start = -(-first.timestamp() // every) * every
    count = int((last.timestamp() - start) // every) + 1
    return [datetime.fromtimestamp(start + every * n, first.tzinfo) for n in range(count)]


def account(ledger: Ledger, lines: list[Any], first: datetime, last: datetime) -> Accounting:
    """Classify every occurrence of every watched schedule from `first` to `last`."""
    item_count: Counter[tuple[str, datetime]] = Counter(
        (ledger.name(r[0]), r[1]) for r in ledger.items
    )
    fired: Counter[tuple[str, datetime]] = Counter()
    fired_items: Counter[tuple[str, str]] = Counter()
    skipped: set[tuple[str, datetime]] = set()
    folded: set[tuple[str, datetime]] = set()
    for schedule_id, when, code, detail, item, where in ledger.recorded:
        name = ledger.name(schedule_id)
        document = detail if isinstance(detail, dict) else json.loads(detail or "{}")
        # A decision stands for `coalesced` occurrences: this one and those before it.
        back = [
            (name, when - timedelta(seconds=ledger.periods.get(name, EVERY) * n))
            for n in range(1, int(document.get("coalesced") or 1))
        ]
        if code == ev.SCHEDULE_FIRED.text:
            fired[(name, when)] += 1
            fired_items[(where, str(item))] += 1
            folded.update(back)
        elif code in SKIPS:
            skipped.add((name, when))
            skipped.update(back)
    ran: Counter[tuple[str, datetime]] = Counter((n, w) for n, w, _, _, _ in lines)
    outcome: Counter[str] = Counter()
    failures: list[str] = []
    instants: set[datetime] = set()
    for name, every in sorted(ledger.periods.items()):
        for instant in _instants(first, last, every):
            instants.add(instant)
            key = (name, instant)
            n_items, n_fired, n_ran = item_count[key], fired[key], ran[key]
            if n_items == 1 and n_fired == 1 and n_ran == 1:
                outcome["fired once"] += 1
            elif n_items == 0 and n_fired == 0 and n_ran == 0 and key in folded:
                outcome["folded into a later fire"] += 1
            elif n_items == 0 and n_fired == 0 and n_ran == 0 and key in skipped:
                outcome["skipped (recorded)"] += 1
            else:
                kind = (
                    "missing"
                    if n_items == 0
                    else "fired twice"
                    if n_items > 1 or n_fired > 1
                    else "ran twice"
                    if n_ran > 1
                    else "not run"
                    if n_ran == 0
                    else "no fired event"
                )
                outcome[kind] += 1
                failures.append(
                    f"{kind}: {name} {instant.isoformat()} ({n_items}/{n_fired}/{n_ran})"
                )
    # Every item with exactly one fired event, in the same database, and no event without one.
    items_at = Counter((where, item) for _, _, item, where in ledger.items)
    unmatched = [
        key
        for key in items_at.keys() | fired_items.keys()
        if items_at[key] != 1 or fired_items[key] != 1
    ]
    for where, item in sorted(unmatched)[:20]:
        failures.append(
            f"item {item} on {where or 'the database'}: {items_at[(where, item)]} row(s), "
            f"{fired_items[(where, item)]} fired event(s)"
        )
    ids = {r[2] for r in ledger.items}
    lost_lines = [line for line in lines if line[3] not in ids]
    for name, when, pid, item, _ in lost_lines[:20]:
        failures.append(
            f"ran but lost from the database: {name} {when.isoformat()} {item} pid {pid}"
        )
    if len(lost_lines) > 20:
        failures.append(f"… {len(lost_lines) - 20} more lines whose item is gone")
    return Accounting(outcome, failures, len(instants), len(lost_lines))


def report(
    database: Database,
    target_file: Path,
    first: datetime,
    last: datetime,
    switches: list[Switch],
    poller: Poller,
    *,
    sync: bool,
) -> dict[str, Any]:
    """Check the run (the module's docstring) and measure each switch's gap."""
    ledger = Ledger()
    ledger.read(database, STACK)
    lines = _lines(target_file)
    checked = account(ledger, lines, first, last)
    failures = checked.failures
    for switch in switches:
        if switch.kept != switch.committed:
            failures.append(
                f"switch {switch.number}: {switch.committed - switch.kept} committed items lost"
            )
    # The target's clock: when each run happened (a fire's created_at is its instant).
    runs = sorted(line[4] for line in lines)
    for switch in switches:
        before = [t for t in runs if t < switch.at]
        after = [t for t in runs if t >= switch.at]
        if before and after:
            switch.gap = after[0] - before[-1]
        near = [
            line[4] - line[1].timestamp()
            for line in lines
            if switch.at - EVERY <= line[1].timestamp() <= switch.at + NEAR
        ]
        switch.late = max(near, default=None)
    # An instant's worst lateness away from every switch: the cadence's own noise.
    worst: defaultdict[float, float] = defaultdict(float)
    for line in lines:
        due = line[1].timestamp()
        worst[due] = max(worst[due], line[4] - due)
    quiet = [
        late
        for due, late in worst.items()
        if first.timestamp() <= due <= last.timestamp()
        and all(not (s.at - EVERY <= due <= s.at + NEAR) for s in switches)
    ]
    statuses: Counter[str] = Counter(
        f"{path} {status}{' ' + code if code else ''}"
        for _, _, path, status, code in poller.answers
    )
    for at, port, path, status, code in poller.answers:
        if status >= 500 and status != 503:
            failures.append(f"{path} on :{port} answered {status} {code} at {at:.1f}")
    pids = Counter(line[2] for line in lines)
    return {
        "replication": "synchronous" if sync else "asynchronous",
        "window": [first.isoformat(), last.isoformat()],
        "instants": checked.instants,
        "schedules": len(ledger.periods),
        "occurrences": dict(checked.outcome),
        "lines": len(lines),
        "lines_by_pid": dict(pids),
        "lines_item_gone": checked.lost_lines,
        "statuses": dict(statuses),
        "switches": [vars(s) for s in switches],
        "quiet_lateness": quiet,
        "failures": failures,
    }


def _p50_max(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.1f} / {max(values):.1f}"


def render(result: dict[str, Any]) -> str:
    """The report as text: accounting, API answers, per-kind gap figures, failures."""
    out = [
        f"replication: {result['replication']}; window {result['window'][0]} .. "
        f"{result['window'][1]} ({result['instants']} instants x {result['schedules']} schedules)",
        "occurrences: " + ", ".join(f"{k} {v}" for k, v in sorted(result["occurrences"].items())),
        f"target lines: {result['lines']} from {len(result['lines_by_pid'])} worker processes, "
        f"{result['lines_item_gone']} of them for an item the database no longer has",
        "API answers: " + ", ".join(f"{k}: {v}" for k, v in sorted(result["statuses"].items())),
    ]
    by_kind: defaultdict[str, list[dict[str, Any]]] = defaultdict(list)
    for switch in result["switches"]:
        by_kind[switch["kind"]].append(switch)
    for kind, rows in sorted(by_kind.items()):
        gaps = [r["gap"] for r in rows if r["gap"] is not None]
        late = [r["late"] for r in rows if r["late"] is not None]
        primary = [r["primary_after"] for r in rows]
        lost = sum(r["committed"] - r["kept"] for r in rows)
        out.append(
            f"{kind} x{len(rows)}: firing gap p50/max {_p50_max(gaps)} s; worst lateness "
            f"p50/max {_p50_max(late)} s; primary back p50/max {_p50_max(primary)} s; "
            f"committed items lost {lost}"
        )
    out.append(
        f"away from switches: an instant's worst lateness p50/max {_p50_max(result['quiet_lateness'])} s"
    )
    out.append(f"failures: {len(result['failures'])}")
    out.extend("  " + line for line in result["failures"][:40])
    return "\n".join(out)


def write_app(path: Path, target_file: Path, every: dict[str, int], stack: str = STACK) -> None:
    """The fault scripts' app at `path` (JSON is YAML): one job `record` (the failover_target,
    appending to `target_file`) and a schedule per name, every that many seconds."""
    document = {
        "name": stack,
        "jobs": {
            "record": {
                "target": "python:failover_target:record",
                "payload": {"file": str(target_file)},
            }
        },
        "crons": {
            name: {"job": "record", "cron": f"every {seconds} seconds"}
            for name, seconds in every.items()
        },
    }
    path.write_text(json.dumps(document))


def finish(root: Path, result: dict[str, Any], shown: str, *, failed: bool, keep: bool) -> NoReturn:
    """Write the run's report.json, print `shown`, keep `root` when the run failed (or
    `keep`), remove it otherwise, and exit 1 on failure."""
    (root / "report.json").write_text(json.dumps(result, indent=2, default=str))
    print(shown)
    if failed or keep:
        print(f"kept: {root}")
    else:
        shutil.rmtree(root, ignore_errors=True)
    sys.exit(1 if failed else 0)
