"""Alert evaluation benchmark: one pass over 100,000 schedules and 10,000 rules.

Run by hand (not part of the test suite)::

    .venv/bin/python bench/alerts_bench.py                    # both databases (~1 min)
    .venv/bin/python bench/alerts_bench.py --no-pg --schedules 10000 --rules 1000

Seeds N schedules (daily, not due) and R rules, a fifth of each condition
(failed, skipped, late, long, absent), each watching one schedule; the absent
rules' deadlines lie in the future. Open conditions present on every pass:
`--late` queued items past their late threshold and `--long` running items
past their long threshold (their alerts open on the first pass, then each pass
re-reads them). Then times `AlertEvaluator.evaluate()`:

- **idle**: nothing new since the last pass (median of `--passes`);
- **news xN**: before each pass (untimed) N failed-item events on schedules
  with a `failed` rule, N successes on schedules with an `absent` rule, and
  N/2 absent deadlines moved into the past; the pass opens the alerts, moves
  the deadlines and enqueues one delivery per notification (median of
  `--passes`, for each N of `--news`).

PostgreSQL: a database `cronplane_alerts_bench_<pid>` is created on --pg-admin (unique, dropped at exit).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import insert, select, update

import machine
from cronplane import events as ev
from cronplane.service.alerting import AlertEvaluator
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.events import append_events, event_values
from cronplane.store.tables import alert_channels, alert_rules, alert_watches, schedules
from dispatch_bench import PG_ADMIN, clock_for, reset, seed

PG_NAME = "cronplane_alerts_bench"
CONDITIONS = ("failed", "skipped", "late", "long", "absent")
THRESHOLD = 600
SETTLE = 1.0


def databases(args: argparse.Namespace, workdir: Path) -> dict[str, str]:
    """name → URL of each database in the run (fresh, migrated)."""
    urls = {"sqlite": f"sqlite:///{workdir / 'alerts.db'}"}
    if not args.no_pg:
        urls["postgresql"] = machine.fresh_postgres(args.pg_admin, PG_NAME)
    for url in urls.values():
        Database(url).upgrade()
    return urls


def prepare(database: Database, args: argparse.Namespace) -> dict[str, list[Any]]:
    """Schedules, rules, watches and the standing late/long items; ids per condition."""
    reset(database)
    clock = clock_for(database)
    now = clock.now()
    seed(database, 0, args.schedules, now + timedelta(days=1), "s")
    with database.read() as conn:
        heads = {row.name: row.id for row in conn.execute(select(schedules.c.name, schedules.c.id))}
    per = args.rules // len(CONDITIONS)
    watched: dict[str, list[Any]] = {}
    rules: list[dict[str, Any]] = []
    watches: list[dict[str, Any]] = []
    for c, condition in enumerate(CONDITIONS):
        watched[condition] = []
        for n in range(per):
            name = f"s{c * per + n}"
            rule_id = uuid.uuid4()
            watched[condition].append((rule_id, heads[name]))
            rules.append(
                {
                    "id": rule_id,
                    "tenant": "bench",
                    "name": f"{condition}-{n}",
                    "condition": condition,
                    "scope": "schedule",
                    "stack": "default",
                    "environment": "default",
                    "target": name,
                    "threshold": THRESHOLD if condition in ("late", "long", "absent") else None,
                    "reasons": [],
                    "channels": ["ops"],
                    "renotify": 3600,
                    "source": "user",
                    "created_by": "bench",
                    "created_at": now,
                }
            )
            if condition == "absent":
                watches.append(
                    {
                        "rule_id": rule_id,
                        "schedule_id": heads[name],
                        "tenant": "bench",
                        "due_at": now + timedelta(days=2),
                    }
                )
    with database.begin() as conn:
        conn.execute(
            insert(alert_channels),
            [
                {
                    "id": uuid.uuid4(),
                    "tenant": "bench",
                    "name": "ops",
                    "kind": "email",
                    "config": {"host": "127.0.0.1", "port": 25, "sender": "a@b", "to": ["o@b"]},
                    "secret": None,
                    "created_at": now,
                }
            ],
        )
        conn.execute(insert(alert_rules), rules)
        conn.execute(insert(alert_watches), watches)
        old = now - timedelta(seconds=THRESHOLD * 2)
        for condition, count, status in (
            ("late", args.late, "queued"),
            ("long", args.long, "running"),
        ):
            for _, schedule_id in watched[condition][:count]:
                values = queue.item_values(
                    tenant="bench",
                    stack="default",
                    environment="default",
                    job="job",
                    payload={},
                    source="schedule",
                    now=old,
                    schedule_id=schedule_id,
                    scheduled_for=old,
                )
                values.update(status=status, started_at=old if status == "running" else None)
                queue.enqueue(conn, values)
    database.backend.analyze(
        database.engine,
        [
            "schedules",
            "schedule_state",
            "alert_rules",
            "alert_watches",
            "queue_items",
            "events",
            "alerts",
        ],
    )
    return watched


def add_news(
    database: Database, watched: dict[str, list[Any]], size: int, due_count: int, round_: int
) -> None:
    """Failed events, successes and passed deadlines for the next pass (untimed)."""
    clock = clock_for(database)
    now = clock.now() - timedelta(seconds=SETTLE + 1)  # settled already
    start = (round_ * size) % len(watched["failed"])
    failed = watched["failed"][start : start + size]
    absent = watched["absent"][start : start + size]
    rows = [
        event_values(ev.ITEM_FAILED, tenant="bench", stack="default", environment="default",
                     schedule_id=sid, actor="bench", message="failed", now=now)
        for _, sid in failed
    ] + [
        event_values(ev.ITEM_SUCCEEDED, tenant="bench", stack="default", environment="default",
                     schedule_id=sid, actor="bench", message="ok", now=now, scheduled_for=now)
        for _, sid in absent
    ]  # fmt: skip
    tail = len(watched["absent"]) - round_ * due_count
    due = [rid for rid, _ in watched["absent"][max(0, tail - due_count) : tail]]
    # Events must be SETTLE old before a pass reads them (and so must the last pass's
    # own): the passes of a running loop are 5 s apart.
    time.sleep(SETTLE + 0.1)
    with database.begin() as conn:
        append_events(conn, rows)
        if due:
            conn.execute(
                update(alert_watches)
                .where(alert_watches.c.rule_id.in_(due))
                .values(due_at=now - timedelta(seconds=1))
            )


def timed(evaluator: AlertEvaluator) -> tuple[float, Any]:
    started = time.perf_counter()
    report = evaluator.evaluate()
    return (time.perf_counter() - started) * 1000, report


def run(name: str, url: str, args: argparse.Namespace) -> None:
    database = Database(url)
    started = time.perf_counter()
    watched = prepare(database, args)
    seeded = time.perf_counter() - started
    evaluator = AlertEvaluator(database, clock_for(database), settle=SETTLE)
    evaluator.evaluate()  # the cursor; opens the standing late/long alerts
    first_ms, _ = timed(evaluator)
    idle = [timed(evaluator)[0] for _ in range(args.passes)]
    cells = []
    round_ = 0
    for size in args.news:
        news, reports = [], []
        for _ in range(args.passes):
            add_news(database, watched, size, max(1, size // 2), round_)
            round_ += 1
            ms, report = timed(evaluator)
            news.append(ms)
            reports.append(report)
        last = reports[-1]
        cells.append(
            f"{statistics.median(news):.1f} ({last.events} events, {last.opened} opened, "
            f"{last.deliveries} deliveries)"
        )
    print(
        f"| {name} | {args.schedules:,} | {args.rules:,} | {seeded:.1f} s | {first_ms:.1f} | "
        f"{statistics.median(idle):.1f} | " + " | ".join(cells) + " |"
    )
    database.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--schedules", type=int, default=100_000)
    parser.add_argument("--rules", type=int, default=10_000)
    parser.add_argument("--late", type=int, default=50, help="standing late items")
    parser.add_argument("--long", type=int, default=50, help="standing long-running items")
    parser.add_argument(
        "--news",
        default="10,100",
        help="failures (and as many successes, and half as many passed absent deadlines) "
        "per pass; one column per size",
    )
    parser.add_argument("--passes", type=int, default=5)
    parser.add_argument("--pg-admin", default=os.environ.get("CRONPLANE_TEST_PG_URL", PG_ADMIN))
    parser.add_argument("--no-pg", action="store_true")
    args = parser.parse_args()
    args.news = [int(n) for n in args.news.split(",") if n]
    workdir = Path(tempfile.mkdtemp(prefix="cronplane-alerts-bench-"))
    urls = databases(args, workdir)
    print(machine.header("alerts bench"))
    print()
    news = " | ".join(f"pass with news x{n}, ms (median)" for n in args.news)
    print(
        f"| database | schedules | rules | seeding | first pass, ms | idle pass, ms (median) | {news} |"
    )
    print("|---|---|---|---|---|---|" + "---|" * len(args.news))
    for name, url in urls.items():
        run(name, url, args)


if __name__ == "__main__":
    main()
