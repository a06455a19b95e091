"""How the History tab reads events: configuration changes with old → new, runs apart."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from cronplane import events as ev
from cronplane.codes import Code
from cronplane.events import Event
from cronplane.ui.history import FieldChange, history_of

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _event(code: Code, detail: dict[str, Any], event_id: int = 1) -> Event:
    fields = dict.fromkeys(Event.__dataclass_fields__)
    fields.update(
        id=event_id,
        code=code.text,
        tenant="t",
        actor="token:x",
        message="m",
        created_at=AT,
        detail=detail,
    )
    return Event(**fields)


def test_changes_carry_their_fields_and_runs_are_not_changes() -> None:
    update = _event(
        ev.SCHEDULE_UPDATED,
        {
            "fields": ["cron", "payload"],
            "changes": {"cron": {"from": "0 3 * * *", "to": "0 4 * * *"}},
        },
    )
    retry = _event(ev.ITEM_RETRY, {"error": "boom", "attempt": 1}, 2)
    fired = _event(ev.SCHEDULE_FIRED, {"coalesced": 1}, 3)
    history = history_of([update, retry, fired], [])
    assert [change.event for change in history.changes] == [update]
    assert history.changes[0].fields == [
        FieldChange("cron", "0 3 * * *", "0 4 * * *"),
        FieldChange("payload", None, None),
    ]
    assert [row.event for row in history.occurrences] == [fired]


def test_the_end_of_a_schedule_is_a_ledger_row_saying_why() -> None:
    fired = _event(ev.SCHEDULE_FIRED, {"coalesced": 1}, 1)
    ended = _event(ev.SCHEDULE_ENDED, {"reason": "max_runs"}, 2)
    by_edit = _event(ev.SCHEDULE_ENDED, {"reason": "edit"}, 3)
    history = history_of([fired, ended, by_edit], [])
    assert [row.outcome for row in history.occurrences] == [
        "fired",
        "ended: max runs reached",
        "ended: an edit left no occurrence",
    ]
    assert history.changes == []


def test_operator_actions_are_listed_with_what_they_did_and_skips_say_why() -> None:
    paused = _event(ev.SCHEDULE_PAUSED, {"note": "db migration", "until": None}, 1)
    resumed = _event(ev.SCHEDULE_RESUMED, {"missed": "all", "enqueued": 3}, 2)
    cancelled = _event(ev.ITEM_CANCELLED, {"cancelled_by": "token:x", "was": "queued"}, 3)
    excluded = _event(ev.SKIPPED_EXCLUDED, {"calendar": "uk", "why": "Christmas Day"}, 4)
    moved = _event(ev.SCHEDULE_FIRED, {"coalesced": 1, "moved_from": ["2027-12-25T09:00Z"]}, 5)
    run_now = _event(ev.SCHEDULE_RUN_NOW, {}, 6)
    retry = _event(ev.SCHEDULE_RUN_NOW, {"retry_of": "019cae02-1ce0-707b-b985-d5586f91e3a8"}, 7)
    history = history_of([paused, resumed, cancelled, excluded, moved, run_now, retry], [])
    assert [(c.event.code, c.action) for c in history.changes] == [
        (ev.SCHEDULE_PAUSED.text, True),
        (ev.SCHEDULE_RESUMED.text, True),
        (ev.ITEM_CANCELLED.text, True),
    ]
    assert history.changes[0].fields == [FieldChange("note", None, "db migration")]
    assert history.changes[1].fields == [
        FieldChange("missed", None, "all"),
        FieldChange("enqueued", None, 3),
    ]
    assert [row.outcome for row in history.occurrences] == [
        "skipped: Christmas Day (calendar uk)",
        "fired, moved from 2027-12-25 by its calendar",
        "run now by token:x",
        "retry of item …6f91e3a8 by token:x",
    ]
