"""A schedule's DST policy decides what the dispatcher fires across a transition (issue 36),
on SQLite and PostgreSQL: rows made by the service, fired by Dispatcher.tick() with the
real occurrence function and a fake clock, checked by the queue items they left.

Europe/London, 2027: 01:00-01:59 is skipped on 28 March and repeated on 31 October
(01:30 BST = 00:30 UTC, 01:30 GMT = 01:30 UTC).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from firing_support import items

SCOPE = Scope("acme")
AUTUMN = datetime(2027, 10, 30, 23, 0, tzinfo=UTC)
SPRING = datetime(2027, 3, 27, 23, 0, tzinfo=UTC)
_names = itertools.count()


def _fired(database: Database, start: datetime, **policy: str) -> list[datetime]:
    """The scheduled_for of every item `30 1 * * *` in London leaves over four hours."""
    clock = FakeClock(start)
    service = ScheduleService(database, clock)
    name = f"s{next(_names)}"
    service.register_job("acme", "default", JobSpec(name=name, target="python:h:ok"), actor="t")
    spec = ScheduleSpec(
        job=name, cron="30 1 * * *", name=name, timezone="Europe/London", overlap="allow"
    )
    created = service.create_schedule(SCOPE, spec, actor="t")
    if policy:
        service.update_schedule(SCOPE, name, SchedulePatch(**policy), actor="t")  # type: ignore[arg-type]
    dispatcher = Dispatcher(database, clock, holder="node-a", ttl=10)
    while clock.now() < start + timedelta(hours=4):
        clock.advance(60)
        dispatcher.tick()
    return [item.scheduled_for for item in items(database, created.id)]


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ({}, [datetime(2027, 10, 31, 0, 30, tzinfo=UTC)]),
        ({"dst_repeat": "first"}, [datetime(2027, 10, 31, 0, 30, tzinfo=UTC)]),
        ({"dst_repeat": "second"}, [datetime(2027, 10, 31, 1, 30, tzinfo=UTC)]),
        (
            {"dst_repeat": "both"},
            [datetime(2027, 10, 31, 0, 30, tzinfo=UTC), datetime(2027, 10, 31, 1, 30, tzinfo=UTC)],
        ),
    ],
)
def test_the_repeated_hour_fires_the_passes_the_policy_names(
    database: Database, policy: dict[str, str], expected: list[datetime]
) -> None:
    assert _fired(database, AUTUMN, **policy) == expected


# One policy per test: each gets a database of its own (a second dispatcher on a clock
# started again would find the first one's lease still held, and fire nothing).
@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ({}, [datetime(2027, 3, 28, 1, 0, tzinfo=UTC)]),  # shift: at the jump, 02:00 BST
        ({"dst_gap": "skip"}, []),
        # later: read with GMT, the skipped 01:30 is 02:30 BST (what Celery beat fires).
        ({"dst_gap": "later"}, [datetime(2027, 3, 28, 1, 30, tzinfo=UTC)]),
    ],
)
def test_a_skipped_fixed_time_fires_as_the_gap_policy_says(
    database: Database, policy: dict[str, str], expected: list[datetime]
) -> None:
    assert _fired(database, SPRING, **policy) == expected
