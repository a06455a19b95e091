"""deploy/: the Prometheus rules and the Grafana dashboard use only metrics /metrics exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import httpx
import yaml
from live_server import serving

from cronplane.store.database import Database
from required_services import require_service

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RULES = DEPLOY / "prometheus" / "alerts.yml"
DASHBOARD = DEPLOY / "grafana" / "cronplane.json"
METRIC = re.compile(r"\bcronplane_[a-z_]+\b")
DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")


def rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(RULES.read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def dashboard_expressions() -> list[str]:
    document = json.loads(DASHBOARD.read_text())
    return [target["expr"] for panel in document["panels"] for target in panel["targets"]]


def exported_samples(database: Database) -> set[str]:
    """Every sample name a real scrape of /metrics returns (with _total, _bucket, …)."""
    with serving(database) as base:
        # Labelled HTTP series appear once a request has been answered.
        httpx.get(base + "/healthz", timeout=5).raise_for_status()
        text = httpx.get(base + "/metrics", timeout=5).text
    return {line.split("{")[0].split(" ")[0] for line in text.splitlines() if line[:1].isalnum()}


def test_every_metric_the_rules_and_dashboard_use_is_exported(sqlite_database: Database) -> None:
    samples = exported_samples(sqlite_database)
    used = {name for rule in rules() for name in METRIC.findall(rule["expr"])}
    used |= {name for expr in dashboard_expressions() for name in METRIC.findall(expr)}
    assert len(used) >= 8  # no-leader, backlog, lateness, failures … are all watched
    missing = sorted(used - samples)
    assert not missing, f"not exported by /metrics: {missing}"


def test_the_rules_file_is_well_formed() -> None:
    document = yaml.safe_load(RULES.read_text())
    assert [group["name"] for group in document["groups"]] == ["cronplane"]
    alerts = rules()
    names = [rule["alert"] for rule in alerts]
    assert len(names) == len(set(names))
    assert {"CronplaneNoLeader", "CronplaneDueBacklogGrowing", "CronplaneFiresLate"} <= set(names)
    assert any("failed" in rule["expr"] for rule in alerts)  # failures are watched
    for rule in alerts:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule["alert"]
        assert isinstance(rule["expr"], str) and rule["expr"].strip()
        assert DURATION.match(rule["for"]), rule["alert"]
        assert rule["labels"]["severity"] in ("critical", "warning", "info")
        assert rule["annotations"]["summary"]


def test_promtool_accepts_the_rules() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        require_service("promtool", "not on PATH (Debian package prometheus)")
    checked = subprocess.run(
        [promtool, "check", "rules", str(RULES)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rules())} rules found" in checked.stdout
