"""CRONPLANE_MIN_INTERVAL through the installed `cronplane` command (issue 16): a faster
cron is refused with exit 2 and X400010INTMIN naming the minimum, and nothing is written;
a bad setting is a coded error too."""

from __future__ import annotations

from cli_process import Cronplane


def test_schedule_add_below_the_minimum_exits_2(cronplane: Cronplane) -> None:
    job = cronplane("job", "add", "flush", "--target", "python:app.jobs:flush")
    assert job.code == 0, job.stderr
    fast = ("schedule", "add", "flush", "--job", "flush", "--cron", "every 1 second")
    refused = cronplane(*fast, CRONPLANE_MIN_INTERVAL="10")
    assert refused.code == 2, (refused.stdout, refused.stderr)
    assert "X400010INTMIN" in refused.stderr
    assert "minimum interval on this installation is 10 seconds" in refused.stderr
    assert cronplane("schedule", "ls", "--json").json() == []
    # The default minimum (1 s) lets the same command through.
    made = cronplane(*fast)
    assert made.code == 0, made.stderr
    # Under a raised minimum the stored row stays as it is.
    listed = cronplane("schedule", "ls", "--json", CRONPLANE_MIN_INTERVAL="10").json()
    assert [row["cron"] for row in listed] == ["@every 1s"]  # type: ignore[index,union-attr]


def test_a_bad_minimum_is_a_coded_error(cronplane: Cronplane) -> None:
    done = cronplane("schedule", "ls", CRONPLANE_MIN_INTERVAL="0")
    assert done.code == 2 and "CRONPLANE_MIN_INTERVAL" in done.stderr, done.stderr
