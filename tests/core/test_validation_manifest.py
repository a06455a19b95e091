"""app.yaml loading: every problem reported with its path, nothing half-loaded."""

from __future__ import annotations

from pathlib import Path

import pytest

from cronplane.errors import InvalidManifest
from cronplane.manifest import load_manifest, parse_manifest
from spec_manifest import SPEC_MANIFEST

GOOD = SPEC_MANIFEST


def test_the_spec_example_loads(tmp_path: Path) -> None:
    path = tmp_path / "app.yaml"
    path.write_text(GOOD)
    manifest = load_manifest(path)
    assert manifest.name == "billing"
    assert manifest.jobs["send-invoices"].payload == {"batch": 100}
    assert manifest.jobs["build-report"].kind == "python"
    assert manifest.crons["send-invoices"].cron == "*/15 * * * *"
    assert manifest.crons["send-invoices"].job == "send-invoices"
    nightly = manifest.crons["nightly-report"]
    assert (nightly.job, nightly.timezone, nightly.payload) == (
        "build-report",
        "Europe/London",
        {"kind": "daily"},
    )


def test_every_problem_is_reported_with_its_path() -> None:
    bad = """
name: "bad name"
colour: blue
jobs:
  send-invoices:
    target: ftp:x
    payload: {batch: 100}
    schema: {type: object, properties: {batch: {type: string}}}
  good: {target: "celery:t", payload: {batch: "x"}, schema: {properties: {batch: {type: string}}}}
crons:
  nightly-report: {job: send-invoices, cron: "at 25:00", timezone: Mars/Olympus, overlap: many}
  ok: "@daily"
  weird: {cron: "@hourly", payload: {batch: 1}, job: send-invoices, extra: 1}
  typed: {cron: "@hourly", payload: {batch: 1}, job: good}
"""
    with pytest.raises(InvalidManifest) as caught:
        parse_manifest(bad)
    problems = caught.value.detail["problems"]
    paths = [p.split(": ")[0] for p in problems]
    assert paths == [
        "colour",
        "name",
        "jobs.send-invoices.target",
        "jobs.send-invoices.payload",
        "crons.nightly-report.cron",
        "crons.nightly-report.timezone",
        "crons.nightly-report.overlap",
        "crons.weird.extra",
        "crons.typed.payload",
    ]
    assert (
        problems[4].startswith("crons.nightly-report.cron: X400001CRNINV")
        and "25:00" in problems[4]
    )


@pytest.mark.parametrize("text", ["[1, 2]", "name: [unclosed", "!!python/object:os.system {}"])
def test_not_a_manifest(text: str) -> None:
    with pytest.raises(InvalidManifest):
        parse_manifest(text)


def test_a_missing_file_is_invalid_manifest(tmp_path: Path) -> None:
    with pytest.raises(InvalidManifest, match="cannot read"):
        load_manifest(tmp_path / "nope.yaml")
