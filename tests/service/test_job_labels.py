"""A job's labels (issue 37: "per schedule (and per job)"), on both databases: set at
registration, by a patch and by a manifest (install, and re-install when they change);
the rules are the schedules' (core.labels), a bad label or selector is refused with its
code and nothing changes; `list_jobs(selector=)` selects as `schedule ls -l` does."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobPatch, JobSpec
from cronplane.errors import InvalidManifest, InvalidRequest
from cronplane.manifest import parse_manifest
from cronplane.service import ScheduleService
from cronplane.store.database import Database

START = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def job(name: str, **labels: str) -> JobSpec:
    return JobSpec(name=name, target=f"python:app.jobs:{name}", labels=labels)


@pytest.fixture
def service(database: Database) -> ScheduleService:
    return ScheduleService(database, FakeClock(START))


def test_labels_are_stored_patched_and_selected(service: ScheduleService) -> None:
    made = service.register_job("acme", "billing", job("pay", team="payments"), actor="t")
    assert made.labels == {"team": "payments"}
    service.register_job("acme", "billing", job("batch", team="payments", tier="batch"), actor="t")
    service.register_job("acme", "billing", job("plain"), actor="t")
    assert service.get_job("acme", "billing", "pay").labels == {"team": "payments"}

    def selected(text: str) -> list[str]:
        return [j.name for j in service.list_jobs("acme", "billing", selector=text)]

    assert selected("team=payments") == ["batch", "pay"]
    assert selected("team=payments,tier!=batch") == ["pay"]
    assert selected("!team") == ["plain"]
    assert selected("") == ["batch", "pay", "plain"]  # blank: every job
    patched = service.update_job(
        "acme", "billing", "plain", JobPatch(labels={"team": "ops"}), actor="t"
    )
    assert (patched.labels, patched.revision) == ({"team": "ops"}, 2)
    assert selected("team in (ops,payments)") == ["batch", "pay", "plain"]
    assert (
        service.update_job("acme", "billing", "plain", JobPatch(labels={}), actor="t").labels == {}
    )


@pytest.mark.parametrize("labels", [{"bad key": "x"}, {"team": "a b"}, {"-x": "y"}])
def test_a_bad_label_is_refused_and_nothing_changes(
    service: ScheduleService, labels: dict[str, str]
) -> None:
    with pytest.raises(InvalidRequest) as refused:
        service.register_job("acme", "billing", job("pay", **labels), actor="t")
    assert refused.value.code.text == "X400007REQINV"
    assert service.list_jobs("acme") == []
    service.register_job("acme", "billing", job("pay", team="payments"), actor="t")
    with pytest.raises(InvalidRequest):
        service.update_job("acme", "billing", "pay", JobPatch(labels=labels), actor="t")
    kept = service.get_job("acme", "billing", "pay")
    assert (kept.labels, kept.revision) == ({"team": "payments"}, 1)


def test_a_bad_selector_is_refused(service: ScheduleService) -> None:
    with pytest.raises(InvalidRequest) as refused:
        service.list_jobs("acme", selector="team in (")
    assert refused.value.detail["field"] == "selector"


APP = """
name: billing
jobs:
  invoices: {target: "python:app.jobs:invoices", labels: {team: payments}}
  reports: {target: "python:app.jobs:reports"}
crons:
  nightly: {job: invoices, cron: "0 3 * * *"}
"""


def test_a_manifest_sets_a_jobs_labels_and_a_reinstall_changes_them(
    service: ScheduleService,
) -> None:
    service.install_app("acme", "prod", parse_manifest(APP), actor="deploy")
    assert service.get_job("acme", "billing", "invoices").labels == {"team": "payments"}
    assert service.get_job("acme", "billing", "reports").labels == {}
    changed = APP.replace("labels: {team: payments}", "labels: {team: ops, tier: batch}")
    service.install_app("acme", "prod", parse_manifest(changed), actor="deploy")
    assert service.get_job("acme", "billing", "invoices").labels == {"team": "ops", "tier": "batch"}
    with pytest.raises(InvalidManifest) as refused:
        parse_manifest(APP.replace("{team: payments}", "{'bad key': x}"))
    assert "jobs.invoices.labels" in refused.value.message + str(refused.value.detail)
