"""A manifest declares alert rules for its app's schedules: installed with the app
(named `<app>.<environment>.<name>`, source `app`), updated and removed by the next
install, gone with the uninstall; a bad declaration is reported with its path."""

from __future__ import annotations

import pytest

from cronplane.clock import FakeClock
from cronplane.core.model import Scope
from cronplane.errors import InvalidAlertRule, InvalidManifest
from cronplane.manifest import parse_manifest
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from service_support import START

MANIFEST = """
name: billing
jobs:
  send-invoices: {target: "python:billing.jobs:send"}
  build-report: {target: "python:billing.jobs:report"}
crons:
  send-invoices: "*/15 * * * *"
  nightly-report: {job: build-report, cron: "at 02:30"}
alerts:
  report-fails: {condition: failed, cron: nightly-report, channels: [ops]}
  invoices-slow: {condition: long, job: send-invoices, threshold: 600, channels: [ops]}
  silence: {condition: absent, threshold: 3600, channels: [ops], renotify: 7200}
"""


@pytest.fixture
def service(database: Database) -> ScheduleService:
    svc = ScheduleService(database, FakeClock(START))
    svc.add_alert_channel(
        "acme", "ops", "email", {"host": "127.0.0.1", "sender": "a@b.c", "to": ["o@b.c"]},
        secret=None, actor="t",
    )  # fmt: skip
    return svc


def rules(service: ScheduleService) -> dict[str, tuple[object, ...]]:
    return {
        r.name: (r.source, r.condition, r.scope, r.stack, r.environment, r.target, r.threshold)
        for r in service.list_alert_rules("acme")
    }


def test_install_upgrade_and_uninstall_manage_the_apps_rules(service: ScheduleService) -> None:
    service.install_app("acme", "prod", parse_manifest(MANIFEST), actor="t")
    assert rules(service) == {
        "billing.prod.report-fails": ("app", "failed", "schedule", "billing", "prod", "nightly-report", None),
        "billing.prod.invoices-slow": ("app", "long", "job", "billing", "prod", "send-invoices", 600),
        "billing.prod.silence": ("app", "absent", "stack", "billing", "prod", None, 3600),
    }  # fmt: skip
    # The absent rule watches the app's two schedules from the install on.
    upgraded = MANIFEST.replace("threshold: 600", "threshold: 900").replace(
        "  silence: {condition: absent, threshold: 3600, channels: [ops], renotify: 7200}\n", ""
    )
    service.install_app("acme", "prod", parse_manifest(upgraded), actor="t")
    assert set(rules(service)) == {"billing.prod.report-fails", "billing.prod.invoices-slow"}
    assert rules(service)["billing.prod.invoices-slow"][-1] == 900
    service.install_app("acme", "staging", parse_manifest(upgraded), actor="t")
    assert len(rules(service)) == 4
    service.uninstall_app(Scope("acme", "billing", "prod"), actor="t")
    assert set(rules(service)) == {"billing.staging.report-fails", "billing.staging.invoices-slow"}


def test_a_rule_naming_an_unknown_channel_installs_nothing(service: ScheduleService) -> None:
    manifest = parse_manifest(MANIFEST.replace("channels: [ops]}", "channels: [pager]}", 1))
    with pytest.raises(InvalidAlertRule, match="pager"):
        service.install_app("acme", "prod", manifest, actor="t")
    assert rules(service) == {} and service.list_jobs("acme") == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (
            "cron: nightly-report",
            "alerts.report-fails.cron: 'nope' is not one of the manifest's crons",
        ),
        ("threshold: 600", "alerts.invoices-slow: X400310ALRINV"),
        ("condition: failed", "alerts.report-fails: X400310ALRINV"),
    ],
)
def test_bad_alert_declarations_are_reported_with_their_path(change: str, problem: str) -> None:
    broken = {
        "cron: nightly-report": "cron: nope",
        "threshold: 600": "threshold: soon",
        "condition: failed": "condition: exploded",
    }[change]
    with pytest.raises(InvalidManifest) as refused:
        parse_manifest(MANIFEST.replace(change, broken))
    assert any(line.startswith(problem) for line in refused.value.detail["problems"])


def test_a_manifest_declares_a_pause_limit(service: ScheduleService) -> None:
    limited = MANIFEST + (
        "  held-too-long: {condition: skipped, reasons: [paused], threshold: 86400,"
        " cron: send-invoices, channels: [ops]}\n"
    )
    service.install_app("acme", "prod", parse_manifest(limited), actor="t")
    (rule,) = [r for r in service.list_alert_rules("acme") if r.name.endswith("held-too-long")]
    assert (rule.condition, rule.reasons, rule.threshold) == ("skipped", ("paused",), 86400)
    with pytest.raises(InvalidManifest) as refused:
        parse_manifest(limited.replace("reasons: [paused]", "reasons: [overlap]"))
    assert any(
        line.startswith("alerts.held-too-long: X400310ALRINV") and "paused" in line
        for line in refused.value.detail["problems"]
    )
