"""django-celery-beat rows that beat has left behind or is done with, in a database
built by Django's migrate (SQLite and PostgreSQL): finished and missed one-offs, a
clocked time with microseconds, expired and disabled tasks, a start_time long past.
None of them may sink the import; what is written installs (`app install --dry-run`
through the real command)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from cli_process import run_cronplane
from test_django_celery_beat_import import build

from cronplane.core.occurrences import first_run
from cronplane.importers.django_celery_beat import read_tasks, translate
from cronplane.importers.translation import usable

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)  # between the rows' 2021 and 2030
TRANSLATED = {
    "future-launch": {"cron": "once at 2030-01-02T03:04:06+00:00"},  # the next whole second
    "paused-nightly": {"cron": "0 3 * * *", "enabled": False},
    "old-start": {"cron": "30 7 * * *"},  # the window opened long ago: no start_at
    "later-start": {"cron": "30 8 * * *", "start_at": "2030-01-01T00:00:00+00:00"},
}
LISTED = {
    "launched": "a finished one-off (clocked at 2021-03-01T09:30:00.123456+00:00, ran)",
    "missed launch": "has passed and it has not run",
    "expired campaign": "expired at 2021-06-01T00:00:00+00:00",
    "ran once": "a finished one_off task",
}


@pytest.fixture(scope="module")
def lifecycle_sqlite(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('beat') / 'lifecycle.sqlite3'}"
    build(url, "lifecycle")
    return url


@pytest.fixture(scope="module")
def lifecycle_postgres(pg_admin_url: str) -> Iterator[str]:
    import psycopg

    name = f"beat_lifecycle_{os.getpid()}_{uuid.uuid4().hex[:6]}"
    plain = pg_admin_url.replace("postgresql+psycopg://", "postgresql://")
    with psycopg.connect(plain, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = plain.rsplit("/", 1)[0] + "/" + name
    try:
        build(url, "lifecycle")
        yield url
    finally:
        with psycopg.connect(plain, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.mark.parametrize("source", ["lifecycle_sqlite", "lifecycle_postgres"])
def test_rows_beat_is_done_with_are_listed_the_rest_translated(
    source: str, request: pytest.FixtureRequest
) -> None:
    url = request.getfixturevalue(source)
    translation = usable(translate(read_tasks(url), stack="shop", now=NOW), NOW)
    crons = translation.document["crons"]
    assert {
        name: {k: v for k, v in c.items() if k in ("cron", "enabled", "start_at")}
        for name, c in crons.items()
    } == TRANSLATED
    reasons = {item.name: item.reason for item in translation.skipped}
    assert reasons.keys() == LISTED.keys()
    for name, reason in LISTED.items():
        assert reason in reasons[name], (name, reasons[name])
    assert any("fraction of a second" in note for note in translation.notes)
    # The one-off fires once, at the first whole second at or after beat's instant.
    launch = first_run(crons["future-launch"]["cron"], "UTC", NOW)
    assert launch == datetime(2030, 1, 2, 3, 4, 6, tzinfo=UTC)


def test_the_cli_writes_what_app_install_dry_run_accepts(
    lifecycle_sqlite: str, tmp_path: Path
) -> None:
    database = {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cp.db'}"}
    done = run_cronplane(
        "import", "django-celery-beat", lifecycle_sqlite, "-o", "app.yaml", env={}, cwd=tmp_path
    )
    assert done.code == 0, done.stderr
    assert "not translated: launched: a finished one-off" in done.stderr
    text = (tmp_path / "app.yaml").read_text()
    assert "# 4 of 8 periodic tasks translated." in text
    assert set(yaml.safe_load(text)["crons"]) == set(TRANSLATED)
    assert run_cronplane("db", "upgrade", env=database, cwd=tmp_path).code == 0
    dry = run_cronplane("app", "install", "app.yaml", "--dry-run", env=database, cwd=tmp_path)
    assert dry.code == 0, dry.stderr
    assert "4 created" in dry.stdout
    strict = run_cronplane(
        "import", "django-celery-beat", lifecycle_sqlite, "--strict", env={}, cwd=tmp_path
    )
    assert strict.code == 2
