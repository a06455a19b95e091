"""The run timeline (issue 39): what each bar says is what the ledger and the items say."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import uuid4

from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane import events as ev
from cronplane.codes import Code
from cronplane.core.model import QueueItem
from cronplane.events import Event
from cronplane.ui.history import history_of
from cronplane.ui.timeline import LIMIT, marks, timeline_svg

AT = datetime(2027, 3, 2, 9, 0, tzinfo=UTC)


def _event(code: Code, at: datetime, detail: dict[str, Any] | None = None) -> Event:
    fields = dict.fromkeys(Event.__dataclass_fields__)
    fields.update(
        id=int(at.timestamp()), code=code.text, tenant="t", actor="dispatcher", message="m",
        created_at=at, scheduled_for=at, detail=detail or {"coalesced": 1},
    )  # fmt: skip
    return Event(**fields)


def _item(at: datetime, status: str, seconds: float | None) -> QueueItem:
    fields = dict.fromkeys(QueueItem.__dataclass_fields__)
    fields.update(
        id=uuid4(), tenant="t", scheduled_for=at, status=status, created_at=at,
        started_at=at if seconds is not None else None,
        finished_at=at + timedelta(seconds=seconds) if seconds is not None else None,
    )  # fmt: skip
    return QueueItem(**fields)


def test_each_bar_says_what_came_of_its_occurrence() -> None:
    ran, failed, skipped, late = (AT + timedelta(minutes=n) for n in range(4))
    events = [
        _event(ev.SCHEDULE_FIRED, ran),
        _event(ev.SCHEDULE_FIRED, failed),
        _event(ev.SKIPPED_OVERLAP, skipped),
        _event(ev.SCHEDULE_FIRED, late, {"coalesced": 1, "late_ms": 2500}),
    ]
    items = [
        _item(ran, "succeeded", 2.0),
        _item(failed, "failed", 4.0),
        _item(late, "queued", None),
    ]
    shown = marks(history_of(events, items))
    assert [(m.tone, m.seconds, m.late) for m in shown] == [
        ("ok", 2.0, False),
        ("bad", 4.0, False),
        ("warn", None, False),
        ("info", None, True),
    ]
    assert shown[1].text == "2027-03-02 09:01:00 UTC: fired, failed in 4.0 s"
    assert shown[3].text.endswith("fired, queued, 2,500 ms late")
    svg = str(timeline_svg(shown))
    assert svg.count("<rect") == 4 and svg.count('class="late"') == 1
    assert 'aria-label="The last 4 occurrences: 1 succeeded or fired, 1 failed, 1 skipped."' in svg
    # The longest run is the tallest bar; a bar without a duration keeps a visible minimum.
    heights = [float(part.split('"')[0]) for part in svg.split('height="')[2:]]
    assert heights[1] == max(heights) and min(heights) >= 6.0


def test_text_from_the_record_is_escaped() -> None:
    event = _event(ev.SKIPPED_EXCLUDED, AT, {"calendar": "<b>uk</b>", "why": "a & b"})
    svg = str(timeline_svg(marks(history_of([event], []))))
    assert "<b>" not in svg and "&lt;b&gt;uk&lt;/b&gt;" in svg and "a &amp; b" in svg


@settings(max_examples=40, deadline=None)
@given(count=st.integers(min_value=0, max_value=80))
def test_the_newest_occurrences_are_shown_oldest_first(count: int) -> None:
    events = [_event(ev.SCHEDULE_FIRED, AT + timedelta(minutes=n)) for n in range(count)]
    shown = marks(history_of(list(reversed(events)), []))
    assert len(shown) == min(count, LIMIT)
    assert [m.at for m in shown] == sorted(m.at for m in shown)
    if count:
        assert shown[-1].at == AT + timedelta(minutes=count - 1)
    assert str(timeline_svg(shown)).count("<rect") == len(shown)
