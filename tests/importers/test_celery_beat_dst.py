"""Celery beat's own `is_due`, ticking minute by minute through both DST nights of
Europe/London and America/New_York, against the imported schedule's fires.

The importer writes each zoned crontab with `dst: {gap: later, repeat: first}`, beat's
reading of both nights. Autumn: the repeated hour runs on its first pass (Debian cron's
default would run wildcard minutes on both: `*/15` 4 times more, `hour=1` 60 times).
Spring: beat reads a skipped wall time with the offset before the jump, so London's
fixed 01:30 runs at 02:30 BST, and `hour=1` once, at 02:00 BST (its first minute moved
by the gap), the rest of the hour being behind that wall time; `later` says exactly
that. All four nights agree, fire for fire, over 6 hours.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from celery import Celery
from celery.schedules import crontab

from cronplane.core.dst import DstPolicy
from cronplane.core.occurrences import next_run
from cronplane.importers.celery_beat import translate

NIGHTS = {
    "Europe/London": (datetime(2027, 3, 28, tzinfo=UTC), datetime(2027, 10, 31, tzinfo=UTC)),
    "America/New_York": (
        datetime(2027, 3, 14, 4, tzinfo=UTC),
        datetime(2027, 11, 7, 4, tzinfo=UTC),
    ),
}
ENTRIES = {
    "quarter-hourly": crontab(minute="*/15"),
    "every-minute-of-1": crontab(hour="1"),
    "fixed": crontab(minute="30", hour="1"),
    "both-hours": crontab(minute="10,30", hour="1,2"),
    "every-other-hour": crontab(minute="0", hour="*/2"),
    "early-twenties": crontab(minute="*/20", hour="0-3"),
    "half-past-two": crontab(minute="30", hour="2"),
}


def beat_fires(schedule: crontab, zone: str, start: datetime, hours: int) -> list[datetime]:
    """What beat publishes: is_due asked every minute, last_run_at set when it fires."""
    app = Celery("dst", set_as_current=False)
    app.conf.timezone = zone
    now = start
    entry = crontab(
        minute=schedule._orig_minute,
        hour=schedule._orig_hour,
        app=app,
        nowfun=lambda: now,
    )
    fired: list[datetime] = []
    last = start - timedelta(minutes=1)
    while now < start + timedelta(hours=hours):
        due, _ = entry.is_due(last)
        if due:
            fired.append(now)
            last = now
        now += timedelta(minutes=1)
    return fired


def cronplane_fires(
    declared: dict[str, Any], zone: str, start: datetime, hours: int
) -> list[datetime]:
    cron, dst = declared["cron"], DstPolicy(**declared.get("dst", {}))
    fired, after = [], start - timedelta(seconds=1)
    while (found := next_run(cron, zone, after, dst=dst)) is not None and found < start + timedelta(
        hours=hours
    ):
        fired.append(found)
        after = found
    return fired


@pytest.mark.parametrize(
    ("zone", "night"),
    [
        pytest.param("Europe/London", 0, id="london-spring"),
        pytest.param("Europe/London", 1, id="london-autumn"),
        pytest.param("America/New_York", 0, id="new-york-spring"),
        pytest.param("America/New_York", 1, id="new-york-autumn"),
    ],
)
def test_imported_crontabs_fire_when_beat_does_across_dst(zone: str, night: int) -> None:
    translation = translate(
        {name: {"task": "app.t", "schedule": s} for name, s in ENTRIES.items()},
        stack="dst",
        timezone=zone,
    )
    start = NIGHTS[zone][night]
    mismatches = []
    for name, schedule in ENTRIES.items():
        declared = translation.document["crons"][name]
        assert declared["dst"] == {"gap": "later", "repeat": "first"}
        beat = beat_fires(schedule, zone, start, 6)
        ours = cronplane_fires(declared, zone, start, 6)
        if beat != ours:
            mismatches.append((name, sorted(set(ours) ^ set(beat))))
    assert not mismatches
