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
