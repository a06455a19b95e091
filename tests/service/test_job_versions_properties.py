"""Job versions' invariants (issue 38), on both databases, as schedules'
(test_versions_properties.py):

- for any sequence of job edits, a rollback to version V gives a definition equal
  to V's (the fields a rollback restores);
- eight editors at once never lose or duplicate a version: a job's numbers are
  1..n with no gap, one per edit that succeeded.
"""

from __future__ import annotations

import threading
from itertools import count

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.core.job_versions import JOB_ROLLBACK_FIELDS, job_definition_of
from cronplane.errors import CronplaneError
from cronplane.service import ScheduleService
from service_support import START

_NAMES = count()

EDITS = st.fixed_dictionaries(
    {},
    optional={
        "title": st.sampled_from(["", "Nightly", "Report ✓"]),
        "target": st.sampled_from(
            ["python:billing.jobs:report", "webhook:https://example.com/h", "celery:app.report"]
        ),
        "kind": st.sampled_from(["report", "batch"]),
        "payload": st.dictionaries(st.sampled_from("abc"), st.integers(0, 3), max_size=2),
        "options": st.fixed_dictionaries(
            {}, optional={"timeout": st.integers(1, 600), "max_attempts": st.integers(1, 5)}
        ),
        "status": st.sampled_from(["active", "inactive"]),
        "labels": st.dictionaries(st.sampled_from(["team", "tier"]), st.sampled_from(["a", "b"])),
    },
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(edits=st.lists(EDITS, min_size=1, max_size=6), pick=st.integers(0, 100))
def test_rollback_to_any_version_restores_its_definition(
    service: ScheduleService, edits: list[dict[str, object]], pick: int
) -> None:
    clock = FakeClock(START)
    service = ScheduleService(service.database, clock)
    name = f"job-{next(_NAMES)}"
    spec = JobSpec(name=name, target="python:billing.jobs:report")
    service.register_job("acme", "billing", spec, actor="a")
    for edit in edits:
        clock.advance(minutes=7)
        service.update_job("acme", "billing", name, JobPatch(**edit), actor="a")  # type: ignore[arg-type]
    versions = service.list_job_versions("acme", "billing", name, limit=1000)
    assert [v.number for v in versions] == list(range(len(versions), 0, -1))
    target = versions[pick % len(versions)]
    clock.advance(minutes=3)
    service.rollback_job("acme", "billing", name, to=target.number, actor="b")
    now = job_definition_of(service.get_job("acme", "billing", name))
    wanted = {k: target.definition[k] for k in JOB_ROLLBACK_FIELDS}
    assert {k: now[k] for k in JOB_ROLLBACK_FIELDS} == wanted
    latest = service.list_job_versions("acme", "billing", name, limit=1)[0]
    assert latest.definition == now


def test_eight_concurrent_editors_lose_no_version(service: ScheduleService) -> None:
    editors, edits = 8, 12
    succeeded: list[int] = []
    failed: list[CronplaneError] = []
    start = threading.Barrier(editors)

    def edit(editor: int) -> None:
        start.wait()
        for i in range(edits):
            try:
                patch = JobPatch(labels={"by": f"e{editor}-{i}"})
                job = service.update_job("acme", "billing", "report", patch, actor=f"e{editor}")
                succeeded.append(job.revision)
            except CronplaneError as error:
                failed.append(error)

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(editors)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failed == []
    numbers = [v.number for v in service.list_job_versions("acme", "billing", "report", limit=1000)]
    assert sorted(numbers) == list(range(1, editors * edits + 2))
    assert len(set(succeeded)) == editors * edits
    latest = service.list_job_versions("acme", "billing", "report", limit=1)[0]
    assert latest.definition == job_definition_of(service.get_job("acme", "billing", "report"))
