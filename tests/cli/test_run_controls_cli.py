"""Run controls from the installed `cronplane` command: exit codes, and a real worker stopped.

`queue cancel` on a running item is answered at once (asked to stop); a
`cronplane worker --pool process` process then kills the child running the
item (its pid disappears) and records `cancelled`.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from cli_process import Cronplane, background


def _setup(cronplane: Cronplane, tmp_path: Path) -> None:
    done = cronplane(
        "job", "add", "tick", "--target", "python:control_handlers:ticking",
        "--timeout", "600", "--max-concurrency", "2", "--json",
    )  # fmt: skip
    assert done.code == 0, done.stderr
    job = done.json()
    assert isinstance(job, dict) and job["options"] == {"timeout": 600, "max_concurrency": 2}
    payload = (
        f'{{"pid_file": "{tmp_path / "pid"}", "tick_file": "{tmp_path / "ticks"}", "seconds": 120}}'
    )
    added = cronplane(
        "schedule", "add", "ticker", "--job", "tick", "--cron", "@yearly",
        "--overlap", "cancel_running", "--timeout", "300", "--payload", payload, "--json",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    row = added.json()
    assert isinstance(row, dict) and (row["overlap"], row["timeout"]) == ("cancel_running", 300)


def test_bad_run_controls_exit_2_with_their_code(cronplane: Cronplane, tmp_path: Path) -> None:
    bad_job = cronplane("job", "add", "j", "--target", "python:m:f", "--max-concurrency", "0")
    assert bad_job.code == 2 and "X400007REQINV" in bad_job.stderr
    assert cronplane("job", "add", "j", "--target", "python:m:f").code == 0
    bad = cronplane("schedule", "add", "s", "--job", "j", "--cron", "@daily", "--timeout", "0")
    assert bad.code == 2 and "X400007REQINV" in bad.stderr and "timeout" in bad.stderr
    unknown = cronplane(
        "schedule", "add", "s", "--job", "j", "--cron", "@daily", "--overlap", "queue_all"
    )
    assert unknown.code == 2
    assert cronplane("schedule", "ls", "--json").json() == []  # nothing was written


def test_queue_cancel_stops_a_running_item_in_a_real_worker(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    _setup(cronplane, tmp_path)
    item = cronplane("schedule", "run", "ticker", "--json").json()
    assert isinstance(item, dict) and item["timeout"] == 300 and item["max_concurrency"] == 2
    env = {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}", "CRONPLANE_TENANT": "acme"}
    with background(["worker", "--pool", "process"], tmp_path, env):
        deadline = time.monotonic() + 60
        while not (tmp_path / "pid").exists() or not (tmp_path / "pid").read_text():
            assert time.monotonic() < deadline, "the worker never started the item"
            time.sleep(0.1)
        pid = int((tmp_path / "pid").read_text())
        asked = cronplane("queue", "cancel", item["id"], "--json")
        assert asked.code == 0, asked.stderr
        answer = asked.json()
        assert isinstance(answer, dict) and answer["status"] == "running"
        assert answer["cancelled_by"] == "cli:test" and answer["cancel_requested_at"]
        while True:
            info = cronplane("queue", "info", item["id"], "--json").json()
            assert isinstance(info, dict)
            if info["status"] == "cancelled":
                break
            assert time.monotonic() < deadline + 30, f"never cancelled: {info}"
            time.sleep(0.2)
        try:
            os.kill(pid, 0)
            alive = True
        except ProcessLookupError:
            alive = False
        assert not alive, "the child running the cancelled item is still there"
    again = cronplane("queue", "cancel", item["id"])
    assert again.code == 4 and "X409200ITMFIN" in again.stderr
    missing = cronplane("queue", "cancel", "0196a3f2-0000-7000-8000-000000000000")
    assert missing.code == 3
