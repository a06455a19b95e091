"""The active window, max_runs and one-off schedules through the service, on both databases:
coded errors that write nothing, naive instants in the row's zone, manifests and overrides."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import yaml

from cronplane.clock import FakeClock
from cronplane.core.explain import explain
from cronplane.core.inputs import SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.errors import CronplaneError, CronRejected, InvalidManifest
from cronplane.manifest import manifest_from_data
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from service_support import START, counts

SCOPE = Scope("acme", "billing")
PROD = Scope("acme", "billing", "prod")


@pytest.mark.parametrize(
    ("values", "code"),
    [
        ({"start_at": "2026-02-01T00:00", "end_at": "2026-01-31T00:00"}, "X400150WININV"),
        ({"start_at": "next tuesday"}, "X400150WININV"),
        ({"max_runs": 0}, "X400151RUNINV"),
        ({"cron": "once at 2026-01-05T11:00"}, "X400001CRNINV"),  # before START
        ({"cron": "once at 2032-01-05T11:00"}, "X400001CRNINV"),  # beyond five years
        ({"cron": "once at 2026-02-30T11:00"}, "X400001CRNINV"),  # not a date
        # A window that leaves no occurrence: the "never fires" rejection.
        ({"cron": "0 0 1 1 *", "end_at": "2026-06-01T00:00"}, "X400001CRNINV"),
    ],
)
def test_bad_values_are_refused_with_their_code_and_write_nothing(
    service: ScheduleService, database: Database, values: dict[str, object], code: str
) -> None:
    before = counts(database)
    spec = {"job": "report", "cron": "0 * * * *", **values}
    with pytest.raises(CronplaneError) as refused:
        service.create_schedule(SCOPE, ScheduleSpec(**spec), actor="t")  # type: ignore[arg-type]
    assert refused.value.code.text == code
    assert counts(database) == before


def test_naive_bounds_are_wall_times_in_the_rows_zone(service: ScheduleService) -> None:
    row = service.create_schedule(
        SCOPE,
        ScheduleSpec(
            job="report",
            cron="0 * * * *",
            timezone="America/New_York",
            start_at="2026-01-05T09:30",  # type: ignore[arg-type]
            end_at="2026-01-06T09:00-05:00",  # type: ignore[arg-type]
            max_runs=5,
        ),
        actor="t",
    )
    assert row.start_at == datetime(2026, 1, 5, 14, 30, tzinfo=UTC)
    assert row.end_at == datetime(2026, 1, 6, 14, 0, tzinfo=UTC)
    assert row.next_run == datetime(2026, 1, 5, 15, 0, tzinfo=UTC)  # max(now, start_at)
    assert (row.max_runs, row.run_count, row.runs_left, row.state) == (5, 0, 5, "active")


def test_a_one_off_is_stored_normalized_and_described(service: ScheduleService) -> None:
    row = service.create_schedule(
        SCOPE, ScheduleSpec(job="report", cron="once at 2026-01-05T18:00+01:00"), actor="t"
    )
    assert row.cron == "@once 2026-01-05T18:00+01:00"
    assert row.next_run == datetime(2026, 1, 5, 17, 0, tzinfo=UTC)
    explained = explain(row.cron, "UTC", START, 5)  # the preview: the single occurrence
    assert explained.next == (datetime(2026, 1, 5, 17, 0, tzinfo=UTC),)
    assert explained.description == "Once, at 18:00 (UTC+01:00) on Monday 5 January 2026"


def test_edit_end_before_start_is_refused(service: ScheduleService) -> None:
    service.create_schedule(
        SCOPE,
        ScheduleSpec(job="report", cron="0 * * * *", start_at=START + timedelta(days=1)),
        actor="t",
    )
    with pytest.raises(CronplaneError) as refused:
        service.update_schedule(SCOPE, "report", SchedulePatch(end_at=START), actor="t")
    assert refused.value.code.text == "X400150WININV"
    assert service.get_schedule(SCOPE, "report").end_at is None


MANIFEST = """
name: billing
jobs:
  report: {target: "python:billing.jobs:report"}
crons:
  campaign:
    job: report
    cron: "0 9 * * *"
    timezone: Europe/Berlin
    start_at: "2026-02-01T00:00"
    end_at: "2026-03-01T00:00+01:00"
    max_runs: 10
  launch:
    job: report
    cron: "once at 2026-02-14T12:00"
"""


def _crons(text: str) -> dict[str, object]:
    return dict(manifest_from_data(yaml.safe_load(text)).crons)


def test_manifest_long_form_declares_the_window_and_operators_override_it(
    service: ScheduleService, clock: FakeClock
) -> None:
    crons = _crons(MANIFEST)
    plan = service.sync(PROD, crons, actor="deploy")  # type: ignore[arg-type]
    assert [item.name for item in plan.created] == ["campaign", "launch"]
    campaign = service.get_schedule(PROD, "campaign")
    assert campaign.start_at == datetime(2026, 1, 31, 23, 0, tzinfo=UTC)  # Berlin midnight
    assert campaign.end_at == datetime(2026, 2, 28, 23, 0, tzinfo=UTC)
    assert campaign.max_runs == 10 and campaign.next_run == datetime(2026, 2, 1, 8, tzinfo=UTC)
    assert service.get_schedule(PROD, "launch").cron == "@once 2026-02-14T12:00"
    assert not service.sync(PROD, crons, actor="deploy").writes  # type: ignore[arg-type]
    # An operator's change of an app row's limit is an override that sync keeps.
    edited = service.update_schedule(PROD, "campaign", SchedulePatch(max_runs=3), actor="ops")
    assert "max_runs" in edited.overrides
    changed = _crons(MANIFEST.replace("max_runs: 10", "max_runs: 20").replace("0 9", "0 10"))
    service.sync(PROD, changed, actor="deploy")  # type: ignore[arg-type]
    campaign = service.get_schedule(PROD, "campaign")
    assert campaign.max_runs == 3 and campaign.cron == "0 10 * * *"
    reset = service.reset_to_manifest(PROD, "campaign", actor="ops")
    assert reset.max_runs == 20 and reset.overrides == ()


def test_manifest_window_problems_are_listed_with_their_path(service: ScheduleService) -> None:
    bad = MANIFEST.replace('end_at: "2026-03-01T00:00+01:00"', 'end_at: "2026-01-01T00:00"')
    with pytest.raises(InvalidManifest) as refused:
        service.sync(PROD, _crons(bad), actor="deploy")  # type: ignore[arg-type]
    assert "crons.campaign.end_at: X400150WININV" in refused.value.detail["problems"][0]
    with pytest.raises(InvalidManifest) as invalid:
        _crons(MANIFEST.replace("max_runs: 10", "max_runs: 0"))
    assert "crons.campaign.max_runs: X400151RUNINV" in invalid.value.detail["problems"][0]
    with pytest.raises(CronRejected):
        service.create_schedule(
            SCOPE, ScheduleSpec(job="report", cron="@once 2020-01-01T00:00"), actor="t"
        )


def test_a_manual_run_does_not_use_a_run(service: ScheduleService) -> None:
    service.create_schedule(SCOPE, ScheduleSpec(job="report", cron="@daily", max_runs=2), actor="t")
    service.run_now(SCOPE, "report", actor="t")
    row = service.get_schedule(SCOPE, "report")
    assert (row.run_count, row.runs_left, row.state) == (0, 2, "active")


def test_declarations_without_a_window_keep_their_document(service: ScheduleService) -> None:
    # Rows declared before the window existed have documents without its keys:
    # the same manifest must not rewrite them, and reset restores "no limit".
    crons = _crons(MANIFEST)
    service.sync(PROD, crons, actor="deploy")  # type: ignore[arg-type]
    launch = service.get_schedule(PROD, "launch")
    assert launch.declared is not None and "max_runs" not in launch.declared
    # A declaration using none of this wave's keys (jitter, timeout, the window,
    # max_runs) stores exactly the document rows synced before them hold.
    assert set(launch.declared) == {
        "job",
        "cron",
        "timezone",
        "payload",
        "misfire_grace",
        "overlap",
    }
    assert service.get_schedule(PROD, "campaign").declared["max_runs"] == 10  # type: ignore[index]
    assert not service.sync(PROD, crons, actor="deploy").writes  # type: ignore[arg-type]
    service.update_schedule(PROD, "launch", SchedulePatch(max_runs=1), actor="ops")
    reset = service.reset_to_manifest(PROD, "launch", actor="ops")
    assert reset.max_runs is None and reset.overrides == ()
