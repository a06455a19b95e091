"""`cronplane import temporal` against a real Temporal dev server.

Schedules are made with `temporal schedule create`, read back by the importer
(through the SDK with --address, and from the JSON of `describe`/`list`), and
every translated schedule's fires — from cronplane's own engine
(core.occurrences.next_run) — are compared with the next action times
Temporal's `describe` reports for it, across DST changes too. Where Temporal's
reading of a DST night differs from cronplane's, the difference is pinned here
instant by instant, and the import says so in a note.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_cronplane

from cronplane.core.occurrences import next_run
from temporal_dev import TemporalDev

START = "2027-01-01T00:00:00Z"
SCHEDULES: dict[str, list[str]] = {
    "utc-weekdays": ["--cron", "0 12 * * 1-5", "--start-time", "2027-02-01T00:00:00Z"],
    "ny-spring": ["--cron", "30 2 * * *", "--time-zone", "America/New_York",
                  "--start-time", "2027-03-10T00:00:00Z"],
    "ny-fall": ["--cron", "30 1 * * *", "--time-zone", "America/New_York",
                "--start-time", "2027-11-05T00:00:00Z"],
    "london-fall": ["--cron", "*/20 1 * * *", "--time-zone", "Europe/London",
                    "--start-time", "2027-10-30T12:00:00Z"],
    "berlin-fridays": ["--calendar", '{"dayOfWeek":"Fri","hour":"9,17","minute":"15"}',
                       "--time-zone", "Europe/Berlin", "--start-time", START,
                       "--end-time", "2027-02-01T00:00:00Z"],
    "phase": ["--interval", "90m/15m", "--start-time", START],
    "every-45m": ["--interval", "45m", "--start-time", START],
    "hourly-jitter": ["--cron", "0 * * * *", "--jitter", "20s", "--start-time", START],
    "weekly-phase": ["--interval", "168h/25h", "--start-time", START],
    "seconds": ["--calendar", '{"second":"30","minute":"*","hour":"*"}', "--start-time", START],
    "friday-13": ["--cron", "0 0 13 * 5", "--start-time", START],
    "policies": ["--cron", "0 6 * * *", "--start-time", START, "--overlap-policy",
                 "TerminateOther", "--catchup-window", "10m", "--pause-on-failure", "--paused",
                 "--notes", "vendor outage", "--remaining-actions", "5", "--input",
                 '{"batch": 100}', "--input", '"eu"', "--execution-timeout", "1h"],
    "skip": ["--cron", "0 7 * * *", "--overlap-policy", "Skip"],
    "buffer-one": ["--cron", "0 7 * * *", "--overlap-policy", "BufferOne"],
    "buffer-all": ["--cron", "0 7 * * *", "--overlap-policy", "BufferAll"],
    "cancel-other": ["--cron", "0 7 * * *", "--overlap-policy", "CancelOther"],
    "allow-all": ["--cron", "0 7 * * *", "--overlap-policy", "AllowAll"],
}  # fmt: skip
LISTED = {
    "weekly-phase": "no set of crons",
    "seconds": "fires at seconds 30",
    "friday-13": "Temporal requires both to match",
}
OVERLAPS = {
    "skip": "skip",
    "buffer-one": "buffer_one",
    "buffer-all": "buffer_one",
    "cancel-other": "cancel_running",
    "allow-all": "allow",
    "policies": "cancel_running",
}
Z = UTC


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(Z)


# Temporal's reading of DST nights, against cronplane's (docs/cron.md): a skipped wall
# time fires at the first minute after the jump in cronplane, never in Temporal; a fixed
# time in the repeated hour fires once in cronplane, twice in Temporal.
DST_DIFFERENCES = {
    "ny-spring": ({datetime(2027, 3, 14, 7, 0, tzinfo=Z)}, set()),
    "ny-fall": (set(), {datetime(2027, 11, 7, 6, 30, tzinfo=Z)}),
}
DST_DAYS = {"london-fall": datetime(2027, 10, 31).date()}


@pytest.fixture(scope="module")
def schedules(temporal_dev: TemporalDev) -> TemporalDev:
    for ident, args in SCHEDULES.items():
        temporal_dev.run(
            "schedule", "create", "--schedule-id", ident, "--workflow-id", f"wf-{ident}",
            "--task-queue", "imports", "--type", "Nightly", *args,
        )  # fmt: skip
    return temporal_dev


def cronplane_fires(crons: list[dict[str, Any]], count: int, now: datetime) -> list[datetime]:
    """The first `count` instants the crons fire at (merged), by cronplane's engine."""
    found: set[datetime] = set()
    for cron in crons:
        start = at(cron["start_at"]) if cron.get("start_at") else None
        end = at(cron["end_at"]) if cron.get("end_at") else None
        after = now if start is None else max(now, start - timedelta(seconds=1))
        for _ in range(count):
            instant = next_run(
                cron["cron"], cron.get("timezone", "UTC"), after, start_at=start, end_at=end
            )
            if instant is None:
                break
            found.add(instant)
            after = instant
    return sorted(found)[:count]


def test_address_import_fires_at_temporal_s_next_action_times(
    schedules: TemporalDev, tmp_path: Path
) -> None:
    done = run_cronplane(
        "import", "temporal", "--address", schedules.address, "-o", "app.yaml", "--json",
        env={}, cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    document: Any = done.json()
    skipped = {item["name"]: item["reason"] for item in document["skipped"]}
    assert skipped.keys() == LISTED.keys()
    for ident, reason in LISTED.items():
        assert reason in skipped[ident], (ident, skipped[ident])
    crons_by_job: dict[str, list[dict[str, Any]]] = {}
    for cron in document["manifest"]["crons"].values():
        crons_by_job.setdefault(cron["job"], []).append(cron)
    assert crons_by_job.keys() == SCHEDULES.keys() - LISTED.keys()
    compared = 0
    for ident, crons in crons_by_job.items():
        described = schedules.describe(ident)
        temporal = [at(t) for t in described["info"]["futureActionTimes"]]
        created = at(described["info"]["createTime"])
        ours = cronplane_fires(crons, len(temporal), created)
        jitter = crons[0].get("jitter", 0)
        if jitter:
            assert len(ours) == len(temporal)
            for mine, theirs in zip(ours, temporal, strict=True):
                assert timedelta(0) <= theirs - mine < timedelta(seconds=jitter), ident
        else:
            horizon = min(ours[-1], temporal[-1])
            mine = {t for t in ours if t <= horizon}
            theirs = {t for t in temporal if t <= horizon}
            if ident in DST_DIFFERENCES:
                assert (mine - theirs, theirs - mine) == DST_DIFFERENCES[ident], ident
            elif ident in DST_DAYS:
                assert mine != theirs
                assert {t.date() for t in mine ^ theirs} == {DST_DAYS[ident]}, ident
            else:
                assert mine == theirs, ident
        compared += len(temporal)
    assert compared >= 120
    assert any("changes its clocks" in note for note in document["notes"])
    # Whatever was written installs.
    database = {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cp.db'}"}
    assert run_cronplane("db", "upgrade", env=database, cwd=tmp_path).code == 0
    dry = run_cronplane("app", "install", "app.yaml", "--dry-run", env=database, cwd=tmp_path)
    assert dry.code == 0, dry.stderr


def test_policies_state_and_action_are_carried(schedules: TemporalDev, tmp_path: Path) -> None:
    done = run_cronplane(
        "import", "temporal", "--address", schedules.address, "--json", env={}, cwd=tmp_path
    )
    document: Any = done.json()
    crons, jobs = document["manifest"]["crons"], document["manifest"]["jobs"]
    for ident, overlap in OVERLAPS.items():
        assert crons[ident]["overlap"] == overlap, ident
        # An item lasts as long as its workflow unless overlap is allowed anyway.
        assert jobs[ident]["options"].get("wait", False) is (overlap != "allow"), ident
    policies = crons["policies"]
    assert policies["misfire_grace"] == 600
    assert policies["enabled"] is False and policies["max_runs"] == 5
    assert policies["payload"] == {"args": [{"batch": 100}, "eu"]}
    assert jobs["policies"] == {
        "title": "Temporal workflow Nightly on imports",
        "target": "temporal:Nightly",
        "options": {
            "task_queue": "imports",
            "namespace": "default",
            "workflow_id": "wf-policies",
            "execution_timeout": 3600.0,
            "wait": True,
        },
    }
    notes = "\n".join(document["notes"])
    assert "policies: paused in Temporal: vendor outage" in notes
    assert "policies: pauseOnFailure not carried over" in notes
    assert "policies: overlap TERMINATE_OTHER" in notes
    assert "buffer-all: overlap BUFFER_ALL" in notes
    assert "misfire_grace" not in crons["skip"]  # Temporal's default catchup: a year


def test_describe_and_list_files(schedules: TemporalDev, tmp_path: Path) -> None:
    # A shell loop of describes: one JSON document after another, no ids in them.
    described = "".join(
        schedules.run("schedule", "describe", "-s", ident, "-o", "json").stdout
        for ident in ("utc-weekdays", "phase", "seconds")
    )
    (tmp_path / "described.json").write_text(described)
    done = run_cronplane("import", "temporal", "described.json", "--json", env={}, cwd=tmp_path)
    assert done.code == 0, done.stderr
    document: Any = done.json()
    assert set(document["manifest"]["jobs"]) == {"wf-utc-weekdays", "wf-phase"}
    assert [item["name"] for item in document["skipped"]] == ["wf-seconds"]
    strict = run_cronplane("import", "temporal", "described.json", "--strict", env={}, cwd=tmp_path)
    assert strict.code == 2
    # One describe alone: named after its file.
    (tmp_path / "nightly.json").write_text(
        schedules.run("schedule", "describe", "-s", "utc-weekdays", "-o", "json").stdout
    )
    one: Any = run_cronplane(
        "import", "temporal", "nightly.json", "--json", env={}, cwd=tmp_path
    ).json()
    assert set(one["manifest"]["crons"]) == {"nightly"}
    # `schedule list` has no task queue: listed unless --task-queue gives one.
    (tmp_path / "list.json").write_text(schedules.run("schedule", "list", "-o", "json").stdout)
    bare: Any = run_cronplane("import", "temporal", "list.json", "--json", env={}, cwd=tmp_path)
    bare_document: Any = bare.json()
    assert bare.code == 0 and not bare_document["manifest"]["crons"]
    assert all(
        "--task-queue" in item["reason"] or item["name"] in LISTED
        for item in bare_document["skipped"]
    )
    queued: Any = run_cronplane(
        "import", "temporal", "list.json", "--task-queue", "imports", "--json", env={}, cwd=tmp_path
    ).json()
    assert {
        c["job"] for c in queued["manifest"]["crons"].values()
    } == SCHEDULES.keys() - LISTED.keys()
    assert queued["manifest"]["crons"]["utc-weekdays"]["cron"] == "0 12 * * 1-5"


def test_bad_sources_are_coded_errors(tmp_path: Path) -> None:
    (tmp_path / "junk.json").write_text("{not json")
    junk = run_cronplane("import", "temporal", "junk.json", env={}, cwd=tmp_path)
    assert junk.code == 2 and junk.stderr.startswith("X400007REQINV"), junk.stderr
    unreachable = run_cronplane(
        "import", "temporal", "--address", "127.0.0.1:1", env={}, cwd=tmp_path
    )
    assert unreachable.code == 2 and unreachable.stderr.startswith("X400007REQINV")
    assert "Traceback" not in unreachable.stderr
    neither = run_cronplane("import", "temporal", env={}, cwd=tmp_path)
    assert neither.code == 2 and "FILE or --address" in neither.stderr
    (tmp_path / "odd.json").write_text(json.dumps([{"scheduleId": "x", "info": {"spec": 5}}]))
    odd: Any = run_cronplane("import", "temporal", "odd.json", "--json", env={}, cwd=tmp_path)
    assert odd.code == 0 and odd.json()["skipped"][0]["name"] == "x"
