"""A legacy zone name (EST, CET, US/Eastern…) is accepted with a warning naming the city
zone it likely stands for (issue 39): EST is UTC-05:00 all year, so a schedule "at 09:00
EST" runs at 10:00 New York time all summer."""

from __future__ import annotations

from cli_process import Cronplane


def test_a_legacy_zone_is_accepted_with_a_warning(cronplane: Cronplane) -> None:
    summer = ("--after", "2027-07-01T00:00")
    est = cronplane("cron", "next", "0 9 * * *", "--tz", "EST", "-n", "1", *summer)
    assert est.code == 0 and est.stdout.split() == ["2027-07-01T14:00:00Z"]  # fixed -05:00
    assert "warning: EST is a fixed offset with no daylight saving" in est.stderr
    assert "America/New_York" in est.stderr
    city = cronplane("cron", "next", "0 9 * * *", "--tz", "America/New_York", "-n", "1", *summer)
    assert city.stdout.split() == ["2027-07-01T13:00:00Z"] and city.stderr == ""
    explained = cronplane("cron", "explain", "0 9 * * *", "--tz", "CET")
    assert explained.code == 0 and "warning: CET is a legacy zone name" in explained.stderr
    assert cronplane("job", "add", "close", "--target", "python:app.jobs:close").code == 0
    added = cronplane(
        "schedule", "add", "eastern", "--job", "close", "--cron", "0 9 * * *",
        "--tz", "US/Eastern", "--json",
    )  # fmt: skip
    assert added.code == 0 and added.json()["timezone"] == "US/Eastern"
    assert "warning: US/Eastern is a legacy zone name" in added.stderr
