"""The DST policy from the installed command (issue 36): `schedule add --dst-gap
--dst-repeat`, `schedule dst`, and `cron next`/`cron explain` trying a policy first.

Europe/London, 2030: 01:00-01:59 is repeated on 27 October (01:30 BST = 00:30 UTC,
01:30 GMT = 01:30 UTC).
"""

from __future__ import annotations

from cli_process import Cronplane

NIGHT = ("--tz", "Europe/London", "--after", "2030-10-26T12:00")


def test_cron_next_and_explain_try_a_policy(cronplane: Cronplane) -> None:
    plain = cronplane("cron", "next", "30 1 * * *", *NIGHT, "-n", "2")
    assert plain.code == 0 and plain.stdout.split() == [
        "2030-10-27T00:30:00Z",
        "2030-10-28T01:30:00Z",
    ]
    both = cronplane("cron", "next", "30 1 * * *", *NIGHT, "-n", "2", "--dst-repeat", "both")
    assert both.stdout.split() == ["2030-10-27T00:30:00Z", "2030-10-27T01:30:00Z"]
    explained = cronplane("cron", "explain", "30 1 * * *", *NIGHT, "--dst-repeat", "second")
    assert explained.code == 0
    assert (
        "01:30 happens twice on 2030-10-27 in Europe/London (BST, then GMT); this schedule runs on the second pass"
        in explained.stdout
    )
    refused = cronplane("cron", "next", "30 1 * * *", "--dst-repeat", "sideways")
    assert refused.code == 2 and "sideways" in refused.stderr


def test_add_with_a_policy_then_change_it(cronplane: Cronplane) -> None:
    assert cronplane("job", "add", "close", "--target", "python:app.jobs:close").code == 0
    added = cronplane(
        "schedule", "add", "payroll", "--job", "close", "--cron", "30 1 * * *",
        "--tz", "Europe/London", "--dst-gap", "skip", "--dst-repeat", "second", "--json",
    )  # fmt: skip
    assert added.code == 0, added.stderr
    row = added.json()
    assert (row["dst_gap"], row["dst_repeat"]) == ("skip", "second")  # type: ignore[index]
    info = cronplane("schedule", "info", "payroll")
    assert info.code == 0 and "Clocks back" in info.stdout and "second" in info.stdout
    changed = cronplane("schedule", "dst", "payroll", "--dst-repeat", "default", "--json")
    assert changed.code == 0, changed.stderr
    assert (changed.json()["dst_gap"], changed.json()["dst_repeat"]) == ("skip", None)  # type: ignore[index]
    shifted = cronplane("schedule", "dst", "payroll", "--dst-gap", "shift", "--json").json()
    assert (shifted["dst_gap"], shifted["dst_repeat"]) == ("shift", None)  # type: ignore[index]
