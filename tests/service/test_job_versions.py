"""Job versions (issue 38): every change of a job's definition writes one version
(register, edit, deactivate, an app install's jobs and its uninstall, housekeeping's
own); list, diff and roll back; what a reader sees is masked; the prune keeps each
job's last twenty."""

from __future__ import annotations

import pytest

from cronplane import events
from cronplane.clock import FakeClock
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.core.job_versions import JOB_ROLLBACK_FIELDS, job_definition_of
from cronplane.core.model import Scope
from cronplane.errors import JobNotFound, JobVersionNotFound, StaleRevision
from cronplane.manifest import parse_manifest
from cronplane.service import ScheduleService, housekeeping
from cronplane.service.base import changes_via
from cronplane.store.events import list_events
from service_support import counts

MANIFEST = """
name: shop
jobs:
  sweep: {target: 'python:billing.jobs:sweep', title: Sweep}
crons:
  nightly: {job: sweep, cron: '0 2 * * *'}
"""


def _numbers(service: ScheduleService, name: str, stack: str = "billing") -> list[int]:
    return [v.number for v in service.list_job_versions("acme", stack, name, limit=1000)]


def test_every_kind_of_change_writes_one_version(
    service: ScheduleService, clock: FakeClock
) -> None:
    versions = service.list_job_versions("acme", "billing", "report")
    assert [(v.number, v.via, v.actor) for v in versions] == [(1, "service", "test")]
    job = service.get_job("acme", "billing", "report")
    assert versions[0].definition == job_definition_of(job)
    clock.advance(minutes=1)
    with changes_via("cli", "retitle"):
        service.update_job("acme", "billing", "report", JobPatch(title="Nightly"), actor="ann")
    # An edit that changes nothing writes no version.
    service.update_job("acme", "billing", "report", JobPatch(title="Nightly"), actor="ann")
    service.deactivate_job("acme", "billing", "report", actor="bob")
    listed = service.list_job_versions("acme", "billing", "report")
    assert [(v.number, v.via, v.actor, v.reason) for v in listed] == [
        (3, "service", "bob", None),
        (2, "cli", "ann", "retitle"),
        (1, "service", "test", None),
    ]
    assert listed[0].definition["status"] == "inactive"
    assert listed[0].definition == job_definition_of(service.get_job("acme", "billing", "report"))

    manifest = parse_manifest(MANIFEST)
    service.install_app("acme", "production", manifest, actor="deploy")
    changed = parse_manifest(MANIFEST.replace("title: Sweep", "title: Sweep all"))
    service.install_app("acme", "production", changed, actor="deploy")
    service.install_app("acme", "production", changed, actor="deploy")  # no change: none
    service.uninstall_app(Scope("acme", "shop", "production"), actor="deploy")
    swept = service.list_job_versions("acme", "shop", "sweep")
    assert [(v.number, v.via) for v in swept] == [(3, "sync"), (2, "sync"), (1, "sync")]
    assert swept[0].definition["status"] == "inactive" and swept[0].digest is None
    assert swept[1].digest is not None and swept[1].digest != swept[2].digest
    assert swept[1].definition["title"] == "Sweep all"

    housekeeping.ensure_system_schedules(service.database, clock, retention_days=30)
    housekeeping.ensure_system_schedules(service.database, clock, retention_days=30)
    system = service.list_job_versions("_system", "cronplane", "prune-history")
    assert [(v.number, v.via, v.actor) for v in system] == [(1, "system", "system")]


def test_diff_and_rollback(service: ScheduleService, clock: FakeClock) -> None:
    update = service.update_job
    update("acme", "billing", "report", JobPatch(payload={"kind": "weekly"}), actor="a")
    target = "webhook:https://example.com/report"
    update("acme", "billing", "report", JobPatch(target=target, labels={"t": "x"}), actor="a")
    shown = service.diff_job_versions("acme", "billing", "report")
    assert (shown.before.number, shown.after.number) == (2, 3)
    assert [c.field for c in shown.changes] == ["target", "kind", "labels"]
    assert [
        c.field for c in service.diff_job_versions("acme", "billing", "report", 1, 2).changes
    ] == ["payload"]
    before = counts(service.database)
    dry = service.rollback_job("acme", "billing", "report", to=1, actor="b", dry_run=True)
    assert dry.dry_run and dry.job.target == "python:billing.jobs:report"
    assert dry.job.kind == "python" and counts(service.database) == before
    assert [c.field for c in dry.changes] == ["target", "kind", "payload", "labels"]
    clock.advance(minutes=5)
    done = service.rollback_job("acme", "billing", "report", to=1, actor="b", reason="bad")
    assert not done.dry_run and done.job.revision == 4
    now = job_definition_of(service.get_job("acme", "billing", "report"))
    first = service.get_job_version("acme", "billing", "report", 1).definition
    assert {k: now[k] for k in JOB_ROLLBACK_FIELDS} == {k: first[k] for k in JOB_ROLLBACK_FIELDS}
    latest = service.list_job_versions("acme", "billing", "report", limit=1)[0]
    assert (latest.number, latest.via, latest.actor, latest.reason) == (4, "rollback", "b", "bad")
    with service.database.read() as conn:
        (event,) = list_events(conn, tenant="acme", codes=[events.JOB_ROLLED_BACK.text])
    assert event.detail["to"] == 1 and event.detail["fields"] == [
        "kind",
        "labels",
        "payload",
        "target",
    ]
    # Paged: below a number.
    assert _numbers(service, "report")[1:] == [
        v.number for v in service.list_job_versions("acme", "billing", "report", before=4)
    ]


def test_refusals_change_nothing(service: ScheduleService) -> None:
    before = counts(service.database)
    with pytest.raises(JobVersionNotFound) as unknown:
        service.rollback_job("acme", "billing", "report", to=9, actor="b")
    assert unknown.value.exit_code == 3 and unknown.value.code.text == "X404384JVRNFD"
    with pytest.raises(JobVersionNotFound):
        service.diff_job_versions("acme", "billing", "report", 1, 9)
    with pytest.raises(JobNotFound):
        service.list_job_versions("acme", "billing", "nope")
    service.update_job("acme", "billing", "report", JobPatch(title="x"), actor="a")
    before = counts(service.database)
    with pytest.raises(StaleRevision):
        service.rollback_job("acme", "billing", "report", to=1, actor="b", revision=1)
    assert counts(service.database) == before


def test_a_reader_never_sees_a_targets_credentials_or_a_secret(service: ScheduleService) -> None:
    leaky = "webhook:https://user:pw@example.com/h?token=abc"
    service.register_job("acme", "billing", JobSpec(name="hook", target=leaky), actor="a")
    service.update_job(
        "acme", "billing", "hook", JobPatch(target="webhook:https://example.com/h"), actor="a"
    )
    for version in service.list_job_versions("acme", "billing", "hook"):
        assert "pw" not in str(version.definition) and "abc" not in str(version.definition)
    changes = service.diff_job_versions("acme", "billing", "hook").changes
    assert "pw" not in str(changes) and "abc" not in str(changes)
    # The rollback itself restores the real target.
    service.rollback_job("acme", "billing", "hook", to=1, actor="b")
    assert service.get_job("acme", "billing", "hook").target == leaky


def test_prune_keeps_each_jobs_last_twenty(service: ScheduleService, clock: FakeClock) -> None:
    for n in range(1, 31):
        service.update_job("acme", "billing", "report", JobPatch(title=f"t{n}"), actor="b")
    clock.advance(days=2)
    pruned = housekeeping.prune(service.database, clock, 30, version_retention_days=1)
    assert pruned["job_versions"] == 11
    assert _numbers(service, "report") == list(range(31, 11, -1))
    # The other job (one version, within its last twenty) keeps it.
    assert _numbers(service, "typed") == [1]
    service.update_job("acme", "billing", "report", JobPatch(title="again"), actor="b")
    assert _numbers(service, "report")[0] == 32
    with pytest.raises(JobVersionNotFound):
        service.get_job_version("acme", "billing", "report", 5)
