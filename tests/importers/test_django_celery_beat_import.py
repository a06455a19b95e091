"""`cronplane import django-celery-beat`: a real django-celery-beat database (its own
migrations and models, SQLite and PostgreSQL), what installs, and when it fires
compared with celery's own schedule objects built from the same rows."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import yaml
from celery.schedules import schedule as celery_interval
from cli_process import run_cronplane
from importer_support import ENVIRONMENT, TENANT, fired, install

from cronplane.clock import FakeClock
from cronplane.core.model import Scope
from cronplane.importers.django_celery_beat import BeatTask, database_name, read_tasks, translate
from cronplane.store.database import Database
from required_services import require_service

BUILDER = Path(__file__).with_name("django_beat_db.py")
START = datetime(2026, 4, 6, 0, 0, tzinfo=UTC)  # a Monday, on every interval's epoch grid
UNTIL = datetime(2026, 4, 10, 0, 0, tzinfo=UTC)
# The frequent ones are watched for two hours only: each due instant is one dispatcher tick.
FAST = ("half-minute", "routed", "send-invoices")
FAST_UNTIL = START + timedelta(hours=2)
TODAY = {
    "send-invoices": ("*/15 * * * *", "UTC"),
    "weekday-report": ("30 7 * * mon-fri", "Europe/London"),
    "every-minute-of-7": ("* 7 * * *", "America/New_York"),
    "routed": ("every 10 minutes", "UTC"),
    "ninety": ("every 90 minutes", "UTC"),
    "half-minute": ("every 30 seconds", "UTC"),
    "two-hourly": ("every 2 hours", "UTC"),
    "daily": ("every 1 day", "UTC"),
    "switched-off": ("0 3 * * *", "UTC"),
}
SKIPPED = {
    "first monday": "Celery requires both to match",
    "sunset lights": "solar schedule (sunset at 51.5, -0.1): no cron expression follows the sun",
    "broken args": "args/kwargs are not JSON",
}


def build(url: str, kinds: str) -> list[str]:
    """Run Django's migrate and create the entries, in a process of its own."""
    done = subprocess.run(
        [sys.executable, str(BUILDER), url, kinds],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")


@pytest.fixture(scope="module")
def beat_sqlite(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """SQLite files holding the `today` and the `all` sets of entries."""
    folder = tmp_path_factory.mktemp("beat")
    urls = {}
    for kinds in ("today", "all"):
        urls[kinds] = f"sqlite:///{folder / f'beat-{kinds}.sqlite3'}"
        build(urls[kinds], kinds)
    return urls


@pytest.fixture(scope="module")
def beat_postgres(pg_admin_url: str) -> Iterator[str]:
    """A PostgreSQL database with the `all` set, made with Django's migrate."""
    import psycopg

    name = f"beat_import_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    plain = pg_admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = plain.rsplit("/", 1)[0] + "/" + name
    try:
        build(url, "all")
        yield url
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_every_task_is_translated_or_listed(beat_sqlite: dict[str, str]) -> None:
    translation = translate(read_tasks(beat_sqlite["today"]), stack="billing")
    crons, jobs = translation.document["crons"], translation.document["jobs"]
    assert {name: (c["cron"], c.get("timezone", "UTC")) for name, c in crons.items()} == TODAY
    assert {item.name: item.reason for item in translation.skipped}.keys() == SKIPPED.keys()
    for item in translation.skipped:
        assert SKIPPED[item.name] in item.reason, item.name
    assert crons["send-invoices"]["payload"] == {"kwargs": {"batch": 100}}
    assert crons["weekday-report"]["payload"] == {"args": ["daily"]}
    assert crons["switched-off"]["enabled"] is False
    assert "enabled" not in crons["send-invoices"]
    assert jobs[crons["send-invoices"]["job"]]["options"] == {"queue": "billing"}
    assert jobs[crons["routed"]["job"]]["options"] == {
        "exchange": "rates",
        "routing_key": "rates.sync",
        "priority": 3,
        "expires": 60,  # expire_seconds
        "headers": {"origin": "beat"},
    }
    # One job per task and routing: two sync_rates tasks, routed differently.
    assert crons["routed"]["job"] != crons["ninety"]["job"]
    assert crons["two-hourly"]["job"] == crons["every-minute-of-7"]["job"]


def test_one_offs_and_windows_use_the_shared_fields(beat_sqlite: dict[str, str]) -> None:
    crons = translate(read_tasks(beat_sqlite["all"]), stack="billing").document["crons"]
    assert crons["launch"]["cron"] == "once at 2026-04-08T09:30+00:00"
    assert crons["campaign"]["start_at"] == "2026-04-08T00:00:00+00:00"
    # Beat runs nothing at or after expires; end_at is inclusive: one second before.
    assert crons["campaign"]["end_at"] == "2026-04-09T23:59:59+00:00"
    assert crons["once-soon"]["max_runs"] == 1


@pytest.fixture(scope="module")
def beat_mysql() -> Iterator[str]:
    """A MariaDB/MySQL database with the `all` set, made with Django's migrate."""
    import pymysql

    name = f"beat_import_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    try:
        server = pymysql.connect(host="127.0.0.1", port=3306, user="root", connect_timeout=3)
    except pymysql.Error as error:
        require_service("MariaDB/MySQL", error)
    with server:
        server.cursor().execute(f"CREATE DATABASE `{name}`")
        try:
            url = f"mysql://root@127.0.0.1:3306/{name}"
            build(url, "all")
            yield url
        finally:
            server.cursor().execute(f"DROP DATABASE IF EXISTS `{name}`")


@pytest.mark.parametrize("server", ["beat_postgres", "beat_mysql"])
def test_a_server_source_reads_as_sqlite_does(
    beat_sqlite: dict[str, str], server: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(server)
    from_sqlite = translate(read_tasks(beat_sqlite["all"]), stack="billing")
    from_server = translate(read_tasks(url), stack="billing")
    assert from_server.document == from_sqlite.document
    assert from_server.skipped == from_sqlite.skipped
    # Django's own name for the database becomes the stack name.
    assert database_name(url) == url.rsplit("/", 1)[1]


def test_the_source_is_opened_read_only(
    beat_sqlite: dict[str, str], beat_postgres: str, beat_mysql: str
) -> None:
    from sqlalchemy import text

    from cronplane.importers.django_celery_beat_source import _read_only, engine_for

    for url in (beat_sqlite["today"], beat_postgres, beat_mysql):
        engine = engine_for(url)
        with engine.connect() as conn, pytest.raises(Exception, match=r"(?i)read.?only"):
            _read_only(conn)
            conn.execute(text("DELETE FROM django_celery_beat_periodictask"))
        engine.dispose()
    assert len(read_tasks(beat_sqlite["today"])) == 12  # nothing was deleted


def celery_schedule(beat: BeatTask) -> Any:
    """The celery object django-celery-beat's model builds for this row's schedule."""
    from django_celery_beat.clockedschedule import clocked
    from django_celery_beat.tzcrontab import TzAwareCrontab

    kind, row = next(iter(beat.schedules.items()))
    if kind == "crontab":
        return TzAwareCrontab(
            minute=row["minute"],
            hour=row["hour"],
            day_of_week=row["day_of_week"],
            day_of_month=row["day_of_month"],
            month_of_year=row["month_of_year"],
            tz=ZoneInfo(row["timezone"]),
        )
    if kind == "interval":
        return celery_interval(run_every=timedelta(**{row["period"]: row["every"]}))
    when = row["clocked_time"]
    return clocked(when if when.tzinfo else when.replace(tzinfo=UTC))


def beat_runs(beat: BeatTask, start: datetime, until: datetime) -> list[datetime]:
    """When beat runs this task: ask the schedule's is_due(last_run_at) and sleep for the
    `next` it answers, as beat's tick does; then its own rules (enabled, start_time,
    expires, one_off)."""
    row = beat.task
    if not row["enabled"]:
        return []
    schedule = celery_schedule(beat)
    clock = {"now": start}
    schedule.nowfun = lambda: clock["now"]
    runs, last = [], start
    while clock["now"] <= until:
        due, wait = schedule.is_due(last)
        if due:
            runs.append(clock["now"])
            last = clock["now"]
            due, wait = schedule.is_due(last)
        clock["now"] += timedelta(seconds=max(wait, 1))
    starts = row.get("start_time")
    expires = row.get("expires")
    runs = [
        t
        for t in runs
        if (starts is None or t >= _aware(starts)) and (expires is None or t < _aware(expires))
    ]
    return runs[:1] if row.get("one_off") else runs


def _aware(value: Any) -> datetime:
    value = datetime.fromisoformat(value) if isinstance(value, str) else value
    assert isinstance(value, datetime)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def check_fires_like_beat(database: Database, url: str) -> None:
    tasks = read_tasks(url)
    translation = translate(tasks, stack="billing")
    clock = FakeClock(START)
    service, report = install(database, translation, clock)
    assert len(report.plan.created) == len(translation.document["crons"])
    scope = Scope(TENANT, "billing", ENVIRONMENT)
    fired(database, clock, FAST_UNTIL)
    for name in FAST:
        service.disable_schedule(scope, name, actor="test")
    seen = fired(database, clock, UNTIL)
    by_cron_name = {beat.task["name"].replace(" ", "-"): beat for beat in tasks}
    checked = 0
    for name in translation.document["crons"]:
        until = FAST_UNTIL if name in FAST else UNTIL
        expected = beat_runs(by_cron_name[name], START, until)
        assert seen.get(name, []) == expected, name
        checked += bool(expected)
    assert checked >= 8
    row = service.get_schedule(scope, "switched-off")
    assert row.next_run is None and not seen.get("switched-off")


def test_today_output_installs_and_fires_when_beat_would(
    database: Database, beat_sqlite: dict[str, str]
) -> None:
    check_fires_like_beat(database, beat_sqlite["today"])


def test_all_output_installs_and_fires_when_beat_would(
    database: Database, beat_sqlite: dict[str, str]
) -> None:
    """Needs `once at`, `start_at`/`end_at` and `max_runs` (helper "oneoff")."""
    check_fires_like_beat(database, beat_sqlite["all"])


def test_cli_reads_the_database_and_is_strict(beat_sqlite: dict[str, str], tmp_path: Path) -> None:
    url = beat_sqlite["today"]
    output = tmp_path / "app.yaml"
    done = run_cronplane(
        "import", "django-celery-beat", url, "-o", str(output), env={}, cwd=tmp_path
    )
    assert done.code == 0, done.stderr
    assert "not translated: sunset lights: solar schedule" in done.stderr
    text = output.read_text()
    assert "# 9 of 12 periodic tasks translated." in text
    assert yaml.safe_load(text)["name"] == "beat-today"  # the database's name
    path = url.removeprefix("sqlite:///")
    strict = run_cronplane(
        "import", "django-celery-beat", path, "--strict", "--stack", "billing", env={}, cwd=tmp_path
    )
    assert strict.code == 2 and yaml.safe_load(strict.stdout)["name"] == "billing"
    missing = run_cronplane(
        "import", "django-celery-beat", f"sqlite:///{tmp_path / 'none.db'}", env={}, cwd=tmp_path
    )
    assert missing.code == 2 and "X400007REQINV" in missing.stderr
    assert not (tmp_path / "none.db").exists()  # read-only: nothing was created


def test_a_url_without_a_driver_is_a_coded_error_without_its_password() -> None:
    import importlib.util

    from cronplane.errors import InvalidRequest
    from cronplane.importers.django_celery_beat_source import engine_for

    if importlib.util.find_spec("pymysql") or importlib.util.find_spec("MySQLdb"):
        url = "nosuchdb://u:secret@h/db"  # a driver is installed here: use a scheme none has
    else:
        url = "mysql://u:secret@h/db"
    with pytest.raises(InvalidRequest) as raised:
        engine_for(url)
    assert "secret" not in str(raised.value) and "u:***@h/db" in str(raised.value)
