"""`cronplane import celery-beat`: every kind of beat entry, and a manifest cronplane accepts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from cronplane.cli.main import cli
from cronplane.clock import FakeClock
from cronplane.core import validation
from cronplane.core.cron import parse
from cronplane.errors import InvalidRequest
from cronplane.importers.celery_beat import (
    Untranslatable,
    crontab_expression,
    interval_expression,
    load_celery_app,
    translate,
    translate_app,
)
from cronplane.manifest import load_manifest, parse_manifest
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from firing_support import START

# name in the beat schedule -> (cron name, cron written, zone, normalized by cronplane)
EXPECTED = {
    "invoices every 15 min": ("invoices-every-15-min", "*/15 * * * *", "Europe/London", None),
    "weekday-report": ("weekday-report", "30 7 * * mon-fri", "Europe/London", "30 7 * * MON-FRI"),
    "quarterly": ("quarterly", "0 1,13 1 1,4,7,10 *", "Europe/London", None),
    "sunday-cleanup": ("sunday-cleanup", "0 3 * * sun", "Europe/London", "0 3 * * SUN"),
    "heartbeat": ("heartbeat", "every 5 minutes", "UTC", "*/5 * * * *"),
    "sync-rates": ("sync-rates", "every 2 hours", "UTC", "0 */2 * * *"),
    "every-90-min": ("every-90-min", "every 90 minutes", "UTC", "@every 90m"),
    "weekly-digest": ("weekly-digest", "every 7 days", "UTC", "@every 7d"),
    "daily-export": ("daily-export", "every 1 day", "UTC", "0 0 * * *"),
    "seconds-as-number": ("seconds-as-number", "every 10 minutes", "UTC", "*/10 * * * *"),
    "schedule-object": ("schedule-object", "every 1 hour", "UTC", "0 */1 * * *"),
    "with-countdown": ("with-countdown", "every 10 minutes", "UTC", "*/10 * * * *"),
    "every-30-seconds": ("every-30-seconds", "every 30 seconds", "UTC", "@every 30s"),
    "flush-10s": ("flush-10s", "every 10 seconds", "UTC", "@every 10s"),
    "relay-90s": ("relay-90s", "every 90 seconds", "UTC", "@every 90s"),
}
SKIPPED = {
    "sunset-lights": "no cron expression follows the sun",
    "half-second": "only whole seconds translate",
    "first-monday": "Celery requires both to match",
    "odd-args": "not JSON",
}


@pytest.fixture(scope="module")
def app() -> object:
    return load_celery_app("celery_app_beat:app", search_path=None)


def test_every_entry_is_translated_or_listed(app: object) -> None:
    translation = translate_app(app)
    document = translation.document
    assert document["name"] == "billing"  # the Celery app's main name
    crons = document["crons"]
    assert len(crons) + len(translation.skipped) == 19  # nothing dropped silently
    for entry, (name, cron, zone, _) in EXPECTED.items():
        assert crons[name]["cron"] == cron, entry
        assert crons[name].get("timezone", "UTC") == zone, entry
    assert {item.name: item.reason for item in translation.skipped}.keys() == SKIPPED.keys()
    for item in translation.skipped:
        assert SKIPPED[item.name] in item.reason
    assert any("countdown=5 not carried over" in note for note in translation.notes)


def test_jobs_and_payloads(app: object) -> None:
    document = translate_app(app).document
    jobs, crons = document["jobs"], document["crons"]
    assert jobs["billing.tasks.send_invoices"] == {
        "title": "Celery task billing.tasks.send_invoices",
        "target": "celery:billing.tasks.send_invoices",
        "options": {"queue": "billing"},
    }
    # kombu Queue objects become their names; priority, expires and headers are carried.
    assert jobs["billing.tasks.cleanup"]["options"] == {
        "queue": "maintenance",
        "priority": 3,
        "expires": 600,
        "headers": {"origin": "beat"},
    }
    # One job per task (and routing), shared by the entries that call it.
    assert crons["weekday-report"]["job"] == crons["quarterly"]["job"] == "billing.tasks.report"
    assert crons["weekday-report"]["payload"] == {"args": ["daily"]}
    assert crons["invoices-every-15-min"]["payload"] == {"kwargs": {"batch": 100}}
    assert "payload" not in crons["heartbeat"]


def test_output_round_trips_through_the_manifest_loader(app: object) -> None:
    translation = translate_app(app, "billing")
    text = translation.to_yaml("celery_app_beat:app")
    assert "#   - sunset-lights: solar schedule" in text  # the file says what is missing
    manifest = parse_manifest(text)
    assert manifest.name == "billing"
    assert set(manifest.crons) == {name for name, *_ in EXPECTED.values()}
    for name, cron, zone, normalized in EXPECTED.values():
        declared = manifest.crons[name]
        assert declared.timezone == zone
        assert validation.normalize_cron(declared.cron, name) == (normalized or cron)
    assert {spec.target for spec in manifest.jobs.values()} >= {"celery:billing.tasks.ping"}


def test_output_installs_as_an_app(app: object, sqlite_database: Database) -> None:
    service = ScheduleService(sqlite_database, FakeClock(START))
    manifest = parse_manifest(translate_app(app, "billing").to_yaml())
    report = service.install_app("acme", "production", manifest, actor="test")
    assert len(report.plan.created) == len(EXPECTED)


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (60, "every 1 minute"),
        (3600, "every 1 hour"),
        (7200, "every 2 hours"),
        (86400, "every 1 day"),
        (3 * 86400, "every 3 days"),
        (150 * 60, "every 150 minutes"),
        (1, "every 1 second"),
        (10, "every 10 seconds"),
        (30, "every 30 seconds"),
        (90, "every 90 seconds"),
        (3601, "every 3601 seconds"),
    ],
)
def test_intervals(seconds: float, expected: str) -> None:
    assert interval_expression(seconds) == expected


@pytest.mark.parametrize("seconds", [0, -60, -10, 0.5, 60.5])
def test_intervals_below_a_second_grain(seconds: float) -> None:
    with pytest.raises(Untranslatable):
        interval_expression(seconds)


def test_seconds_fire_at_celerys_spacing() -> None:
    """A beat_schedule with 10 s and 30 s entries: the manifest says `every N seconds`, and
    cronplane's instants are the ones celery's own `schedule` object makes due, stepping a
    simulated beat one second at a time from an instant both count from (the epoch's grid)."""
    from celery.schedules import schedule

    beat = {
        "flush": {"task": "t.flush", "schedule": timedelta(seconds=10)},
        "relay": {"task": "t.relay", "schedule": schedule(run_every=timedelta(seconds=30))},
        "outbox": {"task": "t.outbox", "schedule": 30},
    }
    translation = translate(beat, stack="s")
    crons = translation.document["crons"]
    assert not translation.skipped
    assert {name: cron["cron"] for name, cron in crons.items()} == {
        "flush": "every 10 seconds",
        "relay": "every 30 seconds",
        "outbox": "every 30 seconds",
    }
    manifest = parse_manifest(translation.to_yaml())
    start = datetime(2026, 1, 5, 12, 0, 0, tzinfo=UTC)  # a multiple of 10 and 30 s
    end = start + timedelta(minutes=5)
    for name, entry in beat.items():
        every = entry["schedule"]
        interval = every if isinstance(every, schedule) else schedule(run_every=every)
        # What beat does: ask is_due(last_run_at) at each tick; a due entry runs now.
        now, last, celery_runs = start, start, []
        while now < end:
            now += timedelta(seconds=1)
            ticking = schedule(run_every=interval.run_every, nowfun=lambda now=now: now)
            if ticking.is_due(last).is_due:
                celery_runs.append(now)
                last = now
        declared = manifest.crons[name]
        cron = parse(validation.normalize_cron(declared.cron, name))
        ours, at = [], start
        while (at := cron.next_after(at, declared.timezone)) <= end:  # type: ignore[operator]
            ours.append(at)
        assert len(celery_runs) == 300 // interval.run_every.total_seconds()
        assert ours == celery_runs, name


def test_crontab_fields() -> None:
    from celery.schedules import crontab

    assert crontab_expression(crontab()) == "* * * * *"
    assert crontab_expression(crontab(minute={0, 30}, hour=range(8, 11))) == "0,30 8,9,10 * * *"
    assert crontab_expression(crontab(minute=0, day_of_week="saturday,sunday")) == (
        "0 * * * sat,sun"
    )
    # One day field a step from `*`: cron ANDs it like Celery does.
    assert crontab_expression(crontab(minute=0, day_of_month="*/2", day_of_week="mon")) == (
        "0 * */2 * mon"
    )


def test_translate_values_directly() -> None:
    translation = translate(
        {
            "a": {"task": "t.a", "schedule": timedelta(minutes=1)},
            "a!": {"task": "t.a", "schedule": timedelta(minutes=2)},
            "no-task": {"schedule": 60},
            "no-schedule": {"task": "t.a"},
            "bad-type": {"task": "t.a", "schedule": "daily"},
        },
        stack="s",
    )
    assert list(translation.document["crons"]) == ["a", "a-2"]  # names kept distinct
    assert [s.name for s in translation.skipped] == ["no-task", "no-schedule", "bad-type"]


def test_load_errors_are_coded() -> None:
    with pytest.raises(InvalidRequest, match="cannot import 'no_such_module_here'"):
        load_celery_app("no_such_module_here:app", search_path=None)
    with pytest.raises(InvalidRequest, match="has no attribute 'nope'"):
        load_celery_app("celery_app_beat:nope", search_path=None)
    with pytest.raises(InvalidRequest, match="is not a Celery app"):
        load_celery_app("celery_app_beat:timedelta", search_path=None)


def test_cli_writes_the_manifest_and_lists_what_it_left(tmp_path: Path) -> None:
    output = tmp_path / "app.yaml"
    runner = CliRunner()
    args = ["import", "celery-beat", "celery_app_beat:app", "--output", str(output)]
    result = runner.invoke(cli, [*args, "--stack", "payments"])
    assert result.exit_code == 0, result.output
    assert "not translated: sunset-lights: solar schedule" in result.stderr
    manifest = load_manifest(output)
    assert manifest.name == "payments" and len(manifest.crons) == len(EXPECTED)
    strict = runner.invoke(cli, [*args, "--strict"])
    assert strict.exit_code == 2
    stdout = runner.invoke(cli, ["import", "celery-beat", "celery_app_beat:app"])
    assert yaml.safe_load(stdout.stdout)["name"] == "billing"
