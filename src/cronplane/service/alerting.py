"""The alert evaluator: one pass, one transaction, from indexed reads only.

:meth:`AlertEvaluator.evaluate` is one pass; the alert loop (`alert_loop.py`)
runs it every 5 s on the one node that holds the `alerts` lease:

1. **the ledger since the cursor**: events with id > the stored cursor
   (primary-key range), up to the first one younger than `settle` seconds (a
   transaction still open may commit a lower id). A failed or expired item
   observes `failed`; a skip event observes `skipped` with its reason
   (`SKIP_EVENTS`); a success clears the schedule's `failed`, `skipped` and
   `absent` alerts and moves its `absent` deadlines to the next expected
   occurrence + N; a created schedule gets the deadlines of the `absent`
   rules that cover it;
2. **late**: queued items whose scheduled_for is older than the smallest
   `late` threshold, among the claimable backlog (ix_queue_items_claim); **long**: running items started
   before the smallest `long` threshold (ix_queue_items_running_since); an open
   late/long alert whose item no longer qualifies clears;
   **paused past a limit** (a `skipped` rule with a threshold): the schedules
   paused longer than the smallest such threshold (ix_schedules_paused, paused
   rows only); an open pause alert whose schedule is no longer paused (resumed,
   or its until passed) clears;
3. **absent**: the deadlines that passed (ix_alert_watches_due) on enabled
   schedules; each then moves to the next occurrence after now + N, so a
   schedule still silent is a repeat (count, re-notify), not a new alert.

What each pass costs grows with what is new or open (events since the last
pass, late and running items, passed deadlines, open alerts), not with the
number of schedules or rules. "Now" is the injected clock: the dispatcher's,
which on PostgreSQL is the database's (`DatabaseClock`).

Every notification is a queue item of the `_system` job `deliver-alert` per
channel (`system:deliver`, `cronplane.targets.notify`): sent once, retried
with backoff by the worker when the receiver fails, its outcome in the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, Final
from uuid import UUID

from sqlalchemy import Connection, Row

from cronplane import events as ev
from cronplane.clock import Clock
from cronplane.core.alerts import (
    Alert,
    AlertRule,
    Condition,
    NotificationKind,
    Observation,
    paused_limit,
    summary,
    watches,
)
from cronplane.core.versions import Change
from cronplane.service.alert_book import Book, EvaluationReport, covering
from cronplane.service.alert_pauses import evaluate_paused
from cronplane.service.alerts import absent_due, head_watched
from cronplane.service.housekeeping import (
    DELIVER_JOB,
    SYSTEM_ENVIRONMENT,
    SYSTEM_STACK,
    SYSTEM_TENANT,
    deliver_job,
)
from cronplane.store import alert_rules as rules_store
from cronplane.store import alerts as store
from cronplane.store import queue
from cronplane.store.database import Database
from cronplane.store.events import event_values, last_event_id, ledger_after
from cronplane.store.jobs import insert_job
from cronplane.store.outcomes import append_outcome_events

CURSOR: Final = "alerts"
ACTOR: Final = "alerts"
SETTLE: Final = 2.0  # seconds an event must be old before the cursor passes it
EVENT_BATCH: Final = 10_000
WATCH_BATCH: Final = 10_000
DELIVERY_ATTEMPTS: Final = 8

FAILED_EVENTS: Final = {ev.ITEM_FAILED.text: "failed", ev.ITEM_EXPIRED.text: "expired"}
# Skip events and the reason a `skipped` rule names them by.
SKIP_EVENTS: dict[str, str] = {
    ev.SKIPPED_PAUSED.text: "paused",
    ev.SKIPPED_OVERLAP.text: "overlap",
    ev.SKIPPED_MISFIRE.text: "misfire",
    ev.JOB_MISSING.text: "job_missing",
}
# A success clears these (late and long clear when their item moves on).
CLEARED_BY_SUCCESS: Final = frozenset({Condition.FAILED, Condition.SKIPPED, Condition.ABSENT})


class AlertEvaluator:
    """Evaluates every tenant's alert rules; only one node should (the leader)."""

    def __init__(self, database: Database, clock: Clock, *, settle: float = SETTLE) -> None:
        self.database = database
        self.clock = clock
        self.settle = settle
        self._job_ready = False

    def evaluate(self) -> EvaluationReport:
        """One pass (see the module docstring), in one transaction."""
        now = self.clock.now()
        with self.database.begin() as conn:
            book = Book(conn, now)
            self._ledger(book)
            # The smallest threshold of each timed kind, in one statement.
            least = rules_store.min_thresholds(
                book.conn, [Condition.LATE, Condition.LONG, Condition.SKIPPED]
            )
            self._queue(book, {c: n for c, n in least.items() if c != Condition.SKIPPED})
            evaluate_paused(book, least.get(Condition.SKIPPED))
            self._absent(book)
            book.flush()
            self._deliver(book)
        self._job_ready = self._job_ready or book.job_written  # committed
        return book.report

    # -- 1. the ledger ---------------------------------------------------------

    def _ledger(self, book: Book) -> None:
        conn = book.conn
        cursor = store.read_cursor(conn, CURSOR)
        if cursor is None:
            # The first pass starts at the present: history is not news.
            store.write_cursor(conn, CURSOR, last_event_id(conn))
            return
        settled = book.now - timedelta(seconds=self.settle)
        rows = []
        for row in ledger_after(conn, cursor, EVENT_BATCH):
            if row.created_at > settled:
                break
            rows.append(row)
        if not rows:
            return
        store.write_cursor(conn, CURSOR, int(rows[-1].id))
        book.report.events = len(rows)
        wanted = {
            *FAILED_EVENTS,
            *SKIP_EVENTS,
            ev.ITEM_SUCCEEDED.text,
            ev.SCHEDULE_CREATED.text,
        }
        news = [
            r
            for r in rows
            if r.code in wanted and r.schedule_id is not None and r.tenant != SYSTEM_TENANT
        ]
        if not news:
            return
        heads = store.schedule_heads(conn, {r.schedule_id for r in news})
        rules_of = covering(conn, [Condition.FAILED, Condition.SKIPPED, Condition.ABSENT], heads)
        book.load(heads)
        for row in news:
            head = heads.get(row.schedule_id)
            # Placed: with the selector rules the labels do not match now (a success
            # still clears their alerts and moves their deadlines; `_event` judges).
            rules = [] if head is None else rules_of(head, placed=True)
            if head is not None and rules:
                self._event(book, row, head, rules)

    def _event(self, book: Book, row: Row[Any], head: Row[Any], rules: list[AlertRule]) -> None:
        seen_at = row.created_at
        detail = {"event_id": row.id, "code": row.code, "message": row.message}
        if row.item_id is not None:
            detail["item_id"] = str(row.item_id)
        if row.scheduled_for is not None:
            detail["scheduled_for"] = row.scheduled_for.isoformat()
        watched = head_watched(head)
        if row.code in FAILED_EVENTS:
            seen = Observation(
                f"event:{row.id}", seen_at, {**detail, "reason": FAILED_EVENTS[row.code]}
            )
            for rule in rules:
                if rule.condition == Condition.FAILED and watches(rule, watched):
                    book.observe(rule, head, seen)
        elif row.code in SKIP_EVENTS:
            reason = SKIP_EVENTS[row.code]
            seen = Observation(f"event:{row.id}", seen_at, {**detail, "reason": reason})
            for rule in rules:
                if (
                    rule.condition == Condition.SKIPPED
                    and watches(rule, watched)
                    and not paused_limit(rule)
                    and (not rule.reasons or reason in rule.reasons)
                ):
                    book.observe(rule, head, seen)
        elif row.code == ev.ITEM_SUCCEEDED.text:
            for rule in rules:
                alert = book.open.get((rule.id, head.id))
                # A run while paused (run now) does not end the pause.
                if (
                    alert is not None
                    and alert.condition in CLEARED_BY_SUCCESS
                    and not paused_limit(rule)
                ):
                    book.clear(rule, alert)
            after = row.scheduled_for or row.created_at
            for rule in rules:
                if rule.condition == Condition.ABSENT and rule.threshold is not None:
                    due = absent_due(head, rule.threshold, after, book.exclusions)
                    if due is not None:
                        book.moves[(rule.id, head.id)] = due
        else:  # a schedule created: the absent rules that cover it start watching
            store.put_watches(
                book.conn,
                [
                    {"rule_id": r.id, "schedule_id": head.id, "tenant": r.tenant, "due_at": due}
                    for r in rules
                    if r.condition == Condition.ABSENT
                    and r.threshold is not None
                    and (due := absent_due(head, r.threshold, book.now, book.exclusions))
                    is not None
                ],
            )

    # -- 2. late and long --------------------------------------------------------

    def _queue(self, book: Book, least: dict[str, int]) -> None:
        conn = book.conn
        if not least:
            return  # no late or long rule anywhere
        conditions = list(least)
        # Every open alert of these conditions, once: what a re-observation updates and
        # what clears when its item moved on (cost: the open alerts of the conditions).
        still_open = store.open_alerts_by_condition(conn, conditions)
        for alert in still_open:
            book.open.setdefault((alert.rule_id, alert.schedule_id), alert)
        book.complete.update(conditions)
        overdue = {
            condition: [
                row
                for row in store.overdue_items(
                    conn,
                    condition == Condition.LATE,
                    book.now - timedelta(seconds=least[condition]),
                    book.now,
                )
                if row.tenant != SYSTEM_TENANT
            ]
            for condition in conditions
        }
        ids = {row.schedule_id for rows in overdue.values() for row in rows}
        heads = store.schedule_heads(conn, ids)
        rules_of = covering(conn, [Condition(c) for c in conditions], heads) if heads else None
        holding: set[tuple[UUID, UUID]] = set()
        for condition, rows in overdue.items():
            for item in sorted(rows, key=lambda r: r.since):
                head = heads.get(item.schedule_id)
                if head is None or rules_of is None:
                    continue
                waited = (book.now - item.since).total_seconds()
                for rule in rules_of(head):
                    threshold = rule.threshold or 0
                    if rule.condition != condition or waited < threshold:
                        continue
                    holding.add((rule.id, head.id))
                    detail = {
                        "item_id": str(item.id),
                        "since": item.since.isoformat(),
                        "seconds": int(waited),
                        "threshold": threshold,
                    }
                    book.observe(rule, head, Observation(f"item:{item.id}", book.now, detail))
        cleared = [a for a in still_open if (a.rule_id, a.schedule_id) not in holding]
        rules = rules_store.rules_by_id(conn, {a.rule_id for a in cleared})
        cleared = self._long_backlog_holds(conn, cleared, rules)
        for alert in cleared:
            key = (alert.rule_id, alert.schedule_id)
            book.clear(rules.get(alert.rule_id), book.open.get(key, alert))

    @staticmethod
    def _long_backlog_holds(
        conn: Connection, cleared: list[Alert], rules: Mapping[UUID, AlertRule]
    ) -> list[Alert]:
        """A `long` alert stays open while its schedule's runs are not back under the
        threshold: between two long runs of a backlog it does not clear (and reopen)."""
        long: dict[UUID, float] = {}
        for a in cleared:
            rule = rules.get(a.rule_id)
            if a.condition == Condition.LONG and rule is not None:
                threshold = float(rule.threshold or 0)  # the smallest, of two rules on one
                long[a.schedule_id] = min(threshold, long.get(a.schedule_id, threshold))
        behind = store.backlog_of_long_runs(conn, long, long) if long else set()
        return [
            a for a in cleared if not (a.condition == Condition.LONG and a.schedule_id in behind)
        ]

    # -- 3. absent ---------------------------------------------------------------

    def _absent(self, book: Book) -> None:
        conn = book.conn
        due = store.due_watches(conn, book.now, WATCH_BATCH)
        if not due:
            return
        rules = rules_store.rules_by_id(conn, {w.rule_id for w in due})
        heads = store.schedule_heads(conn, {w.schedule_id for w in due})
        book.load(heads)
        for watch in due:
            moved = book.moves.get((watch.rule_id, watch.schedule_id))
            if moved is not None and moved > book.now:
                continue  # a success in this pass's ledger moved it already
            rule, head = rules.get(watch.rule_id), heads.get(watch.schedule_id)
            if rule is None or head is None or rule.threshold is None:
                store.drop_watch(conn, watch.rule_id, watch.schedule_id)
                continue
            following = absent_due(head, rule.threshold, book.now, book.exclusions)
            if following is None:
                store.drop_watch(conn, rule.id, head.id)
            else:
                book.moves[(rule.id, head.id)] = following
            if not head.enabled or not watches(rule, head_watched(head)):
                continue  # disabled: expected to be silent; labels not selected now
            expected = watch.due_at - timedelta(seconds=rule.threshold)
            detail = {"expected": expected.isoformat(), "threshold": rule.threshold}
            seen = Observation(f"expected:{expected.isoformat()}", book.now, detail)
            book.observe(rule, head, seen)

    # -- delivery ----------------------------------------------------------------

    def _deliver(self, book: Book) -> None:
        if not book.notes:
            return
        if not self._job_ready:
            # A node that never ran a dispatcher has not registered it yet.
            insert_job(
                book.conn, deliver_job(book.now), change=Change("system", "system", book.now)
            )
            book.job_written = True
        rows: list[dict[str, Any]] = []
        items: list[dict[str, Any]] = []
        for rule, alert, kind in book.notes:
            code = ev.ALERT_RECOVERED if kind == NotificationKind.RECOVERED else ev.ALERT_OPENED
            text = summary(alert, kind)
            if kind != NotificationKind.REPEATED:
                rows.append(
                    event_values(
                        code,
                        tenant=alert.tenant,
                        stack=alert.stack,
                        environment=alert.environment,
                        schedule_id=alert.schedule_id,
                        schedule_name=alert.schedule,
                        actor=ACTOR,
                        message=text,
                        now=book.now,
                        detail={"alert_id": str(alert.id), "rule": alert.rule, **alert.detail},
                    )
                )
            for channel in rule.channels if rule is not None else ():
                payload = {
                    "tenant": alert.tenant,
                    "channel": channel,
                    "kind": kind.value,
                    "summary": text,
                    "alert": notified(alert),
                }
                items.append(
                    queue.item_values(
                        tenant=SYSTEM_TENANT,
                        stack=SYSTEM_STACK,
                        environment=SYSTEM_ENVIRONMENT,
                        job=DELIVER_JOB,
                        payload=payload,
                        source="api",
                        now=book.now,
                        max_attempts=DELIVERY_ATTEMPTS,
                        expires_at=book.now + timedelta(days=1),
                    ),
                )
        book.report.deliveries = len(items)
        # One bulk statement each (a multi-row INSERT; COPY on PostgreSQL).
        queue.enqueue_many(book.conn, items)
        append_outcome_events(book.conn, rows)


def notified(alert: Alert) -> dict[str, Any]:
    """What a notification says of its alert: the alert, less how its earlier
    notifications went (the receivers' own business, and it changes every attempt)."""
    document = alert.to_dict()
    for key in ("delivery", "deliveries"):
        document.pop(key, None)
    return document
