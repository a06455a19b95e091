"""Paused past a limit: a `skipped` rule with a threshold N (its one reason `paused`)
alerts when a schedule has been paused for more than N s, judged from `paused_at`
against the evaluator's clock (the database's on PostgreSQL), and recovers when the
pause ends: an operator resumes it, or its `paused_until` passes. One instance per
pause (the key is its `paused_at`): a schedule still paused at the next pass is the
same instance (re-notified after the rule's interval), a re-pause a new one."""

from __future__ import annotations

from datetime import timedelta
from typing import Final
from uuid import UUID

from cronplane.core.alerts import Condition, Observation, paused_limit
from cronplane.service.alert_book import Book, covering
from cronplane.service.housekeeping import SYSTEM_TENANT
from cronplane.store import alert_rules as rules_store
from cronplane.store import alerts as store

PAUSE_KEY: Final = "paused:"


def evaluate_paused(book: Book, least: int | None) -> None:
    """Observe every (rule, schedule) paused past its rule's limit; clear the open pause
    alerts whose schedule is no longer paused (resumed, or its until passed). `least`:
    the smallest threshold of the `skipped` rules (None: no rule limits pauses)."""
    conn = book.conn
    if least is None:
        return  # no skipped rule with a threshold anywhere
    # The open pause alerts (what clears when the pause ended), and the schedules
    # paused longer than the smallest limit: both grow with what is paused, not
    # with the schedules (partial indexes: ix_alerts_open, ix_schedules_paused).
    still_open = [
        a
        for a in store.open_alerts_by_condition(conn, [Condition.SKIPPED])
        if a.last_key.startswith(PAUSE_KEY)
    ]
    for alert in still_open:
        book.open.setdefault((alert.rule_id, alert.schedule_id), alert)
    since = book.now - timedelta(seconds=least)
    paused = {
        row.id: row
        for row in store.paused_heads(conn, since, book.now)
        if row.tenant != SYSTEM_TENANT and row.enabled
    }
    holding: set[tuple[UUID, UUID]] = set()
    if paused:
        book.load(paused)
        rules_of = covering(conn, [Condition.SKIPPED], paused)
        for head in paused.values():
            seconds = int((book.now - head.paused_at).total_seconds())
            for rule in rules_of(head):
                if not paused_limit(rule) or seconds < (rule.threshold or 0):
                    continue
                holding.add((rule.id, head.id))
                until = head.paused_until
                detail = {
                    "reason": "paused",
                    "paused_at": head.paused_at.isoformat(),
                    "paused_until": None if until is None else until.isoformat(),
                    "paused_by": head.paused_by,
                    "note": head.paused_note,
                    "seconds": seconds,
                    "threshold": rule.threshold,
                }
                instance = f"{PAUSE_KEY}{head.paused_at.isoformat()}"
                book.observe(rule, head, Observation(instance, book.now, detail))
    cleared = [a for a in still_open if (a.rule_id, a.schedule_id) not in holding]
    rules = rules_store.rules_by_id(conn, {a.rule_id for a in cleared})
    for alert in cleared:
        key = (alert.rule_id, alert.schedule_id)
        book.clear(rules.get(alert.rule_id), book.open.get(key, alert))
