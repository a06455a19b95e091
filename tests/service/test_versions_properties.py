"""Versions' invariants (issue 38), on both databases:

- for any sequence of edits, a rollback to version V gives a definition equal to
  V's (the fields a rollback restores) and the next runs V's definition has;
- eight editors at once never lose or duplicate a version: a row's numbers are
  1..n with no gap, one per edit that succeeded.
"""

from __future__ import annotations

import threading
from itertools import count

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.clock import FakeClock
from cronplane.core.inputs import SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.versions import ROLLBACK_FIELDS, definition_of
from cronplane.errors import CronplaneError
from cronplane.service import ScheduleService
from service_support import START

PROD = Scope("acme", "billing", "production")
_NAMES = count()

EDITS = st.fixed_dictionaries(
    {},
    optional={
        "cron": st.sampled_from(["0 2 * * *", "*/15 * * * *", "30 6 * * 1-5", "0 0 1 * *"]),
        "timezone": st.sampled_from(["UTC", "Europe/London", "America/New_York"]),
        "payload": st.dictionaries(st.sampled_from("abc"), st.integers(0, 3), max_size=2),
        "misfire_grace": st.one_of(st.none(), st.integers(1, 600)),
        "overlap": st.sampled_from(["skip", "buffer_one"]),
        "labels": st.dictionaries(st.sampled_from(["team", "tier"]), st.sampled_from(["a", "b"])),
        "enabled": st.booleans(),
        "max_runs": st.one_of(st.none(), st.integers(50, 90)),
    },
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(edits=st.lists(EDITS, min_size=1, max_size=6), pick=st.integers(0, 100))
def test_rollback_to_any_version_restores_its_definition_and_runs(
    service: ScheduleService, edits: list[dict[str, object]], pick: int
) -> None:
    # Each example its own clock (a replay sees the same instants) and its own row.
    clock = FakeClock(START)
    service = ScheduleService(service.database, clock)
    name = f"row-{next(_NAMES)}"
    service.create_schedule(
        PROD, ScheduleSpec(job="report", cron="0 2 * * *", name=name), actor="a"
    )
    for edit in edits:
        clock.advance(minutes=7)
        service.update_schedule(PROD, name, SchedulePatch(**edit), actor="a")  # type: ignore[arg-type]
    versions = service.list_versions(PROD, name, limit=1000)
    target = versions[pick % len(versions)]
    clock.advance(minutes=3)
    service.rollback_schedule(PROD, name, to=target.number, actor="b")
    row = service.get_schedule(PROD, name)
    now = definition_of(row)
    assert {k: now[k] for k in ROLLBACK_FIELDS} == {
        k: target.definition[k] for k in ROLLBACK_FIELDS
    }
    latest = service.list_versions(PROD, name, limit=1)[0]
    shown = service.diff_versions(PROD, name, target.number, latest.number)
    assert shown.runs[0] == shown.runs[1]
    # A next run still ahead is the first of them (one already due waits for its fire).
    if row.enabled and row.next_run is not None and row.next_run > clock.now():
        assert row.next_run == shown.runs[1][0]


def test_eight_concurrent_editors_lose_no_version(service: ScheduleService) -> None:
    service.create_schedule(
        PROD, ScheduleSpec(job="report", cron="0 2 * * *", name="hot"), actor="a"
    )
    editors, edits = 8, 12
    succeeded: list[int] = []
    failed: list[CronplaneError] = []
    start = threading.Barrier(editors)

    def edit(editor: int) -> None:
        start.wait()
        for i in range(edits):
            try:
                patch = SchedulePatch(labels={"by": f"e{editor}-{i}"})
                succeeded.append(
                    service.update_schedule(PROD, "hot", patch, actor=f"e{editor}").revision
                )
            except CronplaneError as error:
                failed.append(error)

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(editors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    numbers = [v.number for v in service.list_versions(PROD, "hot", limit=1000)]
    assert sorted(numbers) == list(range(1, editors * edits + 2))
    # Each edit's revision is unique, and the last version is the row as it stands.
    assert len(set(succeeded)) == editors * edits
    latest = service.list_versions(PROD, "hot", limit=1)[0]
    assert latest.definition == definition_of(service.get_schedule(PROD, "hot"))
