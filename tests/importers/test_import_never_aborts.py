"""One entry never sinks an import: each is translated or listed with its reason, and
what is written loads (the manifest loader and the five-year rule, as `app install`
runs them). Edge cases by name, then property tests over arbitrary input."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from celery.schedules import crontab as celery_crontab
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.core.target_rules import MAX_TARGET_LENGTH
from cronplane.importers import celery_beat, crontab, kubernetes, temporal
from cronplane.importers.translation import Translation, every_hint, usable
from cronplane.manifest import manifest_from_data
from cronplane.targets import RunContext
from cronplane.targets.command import CommandTarget

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)


def cronjob(container: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "job", "namespace": "ns"},
        "spec": {
            "schedule": "0 3 * * *",
            **spec,
            "jobTemplate": {"spec": {"template": {"spec": {"containers": [container]}}}},
        },
    }


def loads(translation: Translation) -> Translation:
    """`usable` then the loader on what remains: it must accept it."""
    checked = usable(translation, NOW)
    manifest_from_data(checked.document)
    return checked


def test_a_multi_line_script_runs_as_written(tmp_path: Any) -> None:
    script = "set -e\necho one\nfor n in 2 3; do\n  echo $n\ndone\n"
    translation = kubernetes.translate(
        [("cj.yaml", cronjob({"image": "alpine", "command": ["/bin/bash", "-c", script]}))],
        stack="k",
        as_kind="command",
    )
    job = loads(translation).document["jobs"]["job"]
    assert job["target"] == "command:" + script.strip()
    assert job["options"]["shell"] == "/bin/bash"
    context = RunContext(
        tenant="t", stack="k", environment="e", job="job", item_id=uuid.uuid4(),
        schedule_id=None, schedule=None, scheduled_for=None, attempt=1, source="manual",
        options=job["options"], timeout=30,
    )  # fmt: skip
    result = CommandTarget(True).run(job["target"].removeprefix("command:"), {}, context)
    assert result["stdout"] == "one\n2\n3\n"


def test_a_script_over_the_target_limit_is_listed_not_fatal() -> None:
    long = "echo x\n" * (MAX_TARGET_LENGTH // 7 + 1)
    documents = [
        ("a.yaml", cronjob({"image": "alpine", "command": ["sh", "-c", long]})),
        (
            "b.yaml",
            {**cronjob({"image": "alpine", "command": ["date"]}), "metadata": {"name": "ok"}},
        ),
    ]
    checked = loads(kubernetes.translate(documents, stack="k", as_kind="command"))
    assert list(checked.document["crons"]) == ["ok"]
    assert (
        checked.skipped[0].name == "job" and "refused by app install" in checked.skipped[0].reason
    )


def test_args_without_command_and_variable_references() -> None:
    container = {
        "image": "registry/app:1",
        "args": ["--since", "$(SINCE)", "--token", "$(TOKEN)", "--literal", "$$(SINCE)"],
        "env": [
            {"name": "SINCE", "value": "24h"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
        ],
    }
    translation = loads(
        kubernetes.translate([("cj.yaml", cronjob(container))], stack="k", as_kind="command")
    )
    target = translation.document["jobs"]["job"]["target"]
    assert target == "command:--since 24h --token '$(TOKEN)' --literal '$(SINCE)'"
    notes = "\n".join(translation.notes)
    assert "ENTRYPOINT (registry/app:1)" in notes
    assert "$(TOKEN) in the command" in notes


def test_every_hints_suggest_the_same_spacing() -> None:
    assert "`every 1 hour`" in every_hint("@every 1h")
    assert "`every 90 minutes`" in every_hint("@every 1h30m")
    assert "`every 5 minutes` (= `*/5 * * * *`" in every_hint("@every 5m")
    translation = kubernetes.translate(
        [("cj.yaml", cronjob({"image": "a", "command": ["x"]}, schedule="@every 1h"))], stack="k"
    )
    assert "`every 1 hour`" in translation.skipped[0].reason
    assert "*/5" not in translation.skipped[0].reason


def test_crontab_six_fields_and_the_user_column_by_content() -> None:
    text = "0 */5 * * * * /usr/bin/poll\n*/10 * * * * /usr/bin/ok\n"
    translation = loads(crontab.translate(text, stack="c"))
    assert list(translation.document["crons"]) == ["ok"]
    assert "6 time fields" in translation.skipped[0].reason
    assert "write `*/5 * * * *`" in translation.skipped[0].reason
    assert crontab.looks_like_system("*/5 * * * * www-data php /srv/cron.php\n") == ["www-data"]
    assert crontab.looks_like_system("*/5 * * * * deploy /srv/run.sh\n") == ["deploy"]
    assert crontab.looks_like_system("*/5 * * * * php /srv/artisan schedule:run\n") is None
    assert crontab.looks_like_system("@daily backup /usr/bin/dump\n") == ["backup"]
    assert crontab.looks_like_system("# only comments\n") is None


def test_celery_entries_of_an_unknown_zone_are_listed_intervals_kept() -> None:
    schedule = {
        "report": {"task": "app.report", "schedule": celery_crontab(minute="0", hour="7")},
        "ping": {"task": "app.ping", "schedule": 300.0},
    }
    translation = loads(celery_beat.translate(schedule, stack="s", timezone="Europe/Lndon"))
    assert list(translation.document["crons"]) == ["ping"]
    assert "Europe/Lndon" in translation.skipped[0].reason


# --- property tests: anything in, a loadable manifest and a list of skips out ----------

FIELD = st.sampled_from(["*", "0", "5", "*/5", "1-5", "MON", "7", "60", "L", "?", "1,2", "x", ""])
WORD = st.sampled_from(
    ["/usr/bin/job", "root", "%", "\\%", "if", "then", "fi", ";", "&&", "cd /", "echo $HOME",
     "@reboot", "@every", "1h", "CRON_TZ=Mars/Base", "CRON_TZ=Europe/Paris", "SHELL=/bin/bash",
     "MAILTO=x", "#", "é", "\t", "'", '"', "[", "*"]
)  # fmt: skip
LINE = st.one_of(
    st.lists(st.one_of(FIELD, WORD), min_size=0, max_size=9).map(" ".join),
    st.text(max_size=40),
)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(lines=st.lists(LINE, max_size=12), system=st.booleans())
def test_any_crontab_gives_a_loadable_manifest(lines: list[str], system: bool) -> None:
    text = "\n".join(lines)
    checked = loads(crontab.translate(text, stack="c", system=system))
    entries = len(checked.document["crons"]) + len(checked.skipped)
    assert entries <= len(text.splitlines())


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
CONTAINER = st.fixed_dictionaries(
    {"image": st.text(max_size=10)},
    optional={
        "command": st.lists(st.text(max_size=30), max_size=4) | JSON,
        "args": st.lists(st.text(max_size=30), max_size=4) | JSON,
        "env": st.lists(
            st.fixed_dictionaries({"name": st.text(max_size=6)}, optional={"value": JSON}),
            max_size=3,
        )
        | JSON,
        "workingDir": JSON,
    },
)
SPEC = st.fixed_dictionaries(
    {},
    optional={
        "schedule": st.one_of(
            LINE, JSON, st.sampled_from(["@every 1h", "CRON_TZ=UTC 0 * * * *", "@hourly"])
        ),
        "timeZone": st.one_of(st.sampled_from(["Europe/Paris", "Nowhere/Land", ""]), JSON),
        "concurrencyPolicy": st.one_of(st.sampled_from(["Allow", "Forbid", "Replace"]), JSON),
        "startingDeadlineSeconds": JSON,
        "suspend": JSON,
    },
)


@SETTINGS
@given(
    items=st.lists(
        st.one_of(
            st.tuples(SPEC, CONTAINER).map(lambda pair: cronjob(pair[1], **pair[0])),
            JSON,
        ),
        max_size=4,
    )
)
def test_any_kubernetes_documents_give_a_loadable_manifest(items: list[Any]) -> None:
    loads(kubernetes.translate([(f"{i}.yaml", d) for i, d in enumerate(items)], stack="k"))


RANGE = st.fixed_dictionaries(
    {},
    optional={
        "start": st.integers(-2, 70),
        "end": st.integers(-2, 70),
        "step": st.integers(-1, 30),
    },
)
CALENDAR = st.fixed_dictionaries(
    {
        key: st.lists(RANGE, max_size=2)
        for key in ("second", "minute", "hour", "dayOfMonth", "month", "dayOfWeek")
    },
    optional={"year": st.lists(RANGE, max_size=1)},
)
DURATION = st.one_of(
    st.sampled_from(["0s", "60s", "5400s", "900s", "3600s", "86400s", "0.5s", "-1s", "x"]), JSON
)
SCHEDULE = st.fixed_dictionaries(
    {
        "spec": st.fixed_dictionaries(
            {},
            optional={
                "structuredCalendar": st.lists(CALENDAR, max_size=2) | JSON,
                "interval": st.lists(st.fixed_dictionaries({"interval": DURATION}, optional={"phase": DURATION}), max_size=2),
                "timezoneName": st.sampled_from(["", "America/New_York", "Bad/Zone"]),
                "jitter": DURATION,
                "startTime": st.sampled_from(["2027-01-01T00:00:00Z", "2020-01-01T00:00:00.123456789Z", "junk"]),
            },
        ),
        "action": st.one_of(
            JSON,
            st.fixed_dictionaries(
                {"startWorkflow": st.fixed_dictionaries(
                    {"workflowType": st.fixed_dictionaries({"name": st.text(max_size=12)}),
                     "taskQueue": st.fixed_dictionaries({"name": st.text(max_size=8)})},
                    optional={"input": JSON, "workflowId": JSON},
                )}
            ),
        ),
        "policies": st.fixed_dictionaries({}, optional={"overlapPolicy": JSON, "catchupWindow": DURATION}),
        "state": st.fixed_dictionaries({}, optional={"paused": JSON, "limitedActions": st.booleans(), "remainingActions": st.one_of(st.sampled_from(["0", "3", 2, "x", -1]), JSON)}),
    }
)  # fmt: skip


@SETTINGS
@given(items=st.lists(st.one_of(st.fixed_dictionaries({"schedule": SCHEDULE}), JSON), max_size=3))
def test_any_temporal_json_gives_a_loadable_manifest(items: list[Any]) -> None:
    documents = [item for item in items if isinstance(item, dict)]
    try:
        translation = temporal.translate(documents, stack="t", task_queue="q")
    except (ValueError, TypeError, AttributeError) as error:  # the bug this test is for
        pytest.fail(f"{type(error).__name__}: {error}")
    loads(translation)


CELL = st.one_of(
    JSON,
    st.datetimes(timezones=st.just(UTC)),
    st.sampled_from(["2021-01-01 00:00:00", "junk", "*/5", "mon-fri"]),
)
BEAT_ROW = st.fixed_dictionaries(
    {
        "id": st.integers(1, 9),
        "name": st.text(max_size=10),
        "task": st.sampled_from(["app.t", "", "bad name"]),
    },
    optional=dict.fromkeys(
        (
            "enabled",
            "one_off",
            "start_time",
            "expires",
            "args",
            "kwargs",
            "queue",
            "priority",
            "headers",
            "total_run_count",
            "last_run_at",
        ),
        CELL,
    ),
)
SCHEDULE_ROWS = st.dictionaries(
    st.sampled_from(["crontab", "interval", "clocked", "solar"]),
    st.dictionaries(
        st.sampled_from(["minute", "hour", "day_of_month", "month_of_year", "day_of_week", "timezone", "every", "period", "clocked_time"]),
        CELL,
        max_size=5,
    ),
    max_size=2,
)  # fmt: skip


@SETTINGS
@given(rows=st.lists(st.tuples(BEAT_ROW, SCHEDULE_ROWS), max_size=4))
def test_any_django_beat_rows_give_a_loadable_manifest(rows: list[Any]) -> None:
    from cronplane.importers.django_celery_beat import BeatTask
    from cronplane.importers.django_celery_beat import translate as translate_rows

    tasks = [BeatTask(row, schedules) for row, schedules in rows]
    loads(translate_rows(tasks, stack="d", now=NOW))


BEAT_SCHEDULE = st.one_of(
    JSON,
    st.floats(allow_nan=True, allow_infinity=True),
    st.builds(
        celery_crontab,
        minute=st.sampled_from(["*", "0", "*/15", "5,35"]),
        hour=st.sampled_from(["*", "7", "1-5"]),
        day_of_month=st.sampled_from(["*", "1", "13"]),
        day_of_week=st.sampled_from(["*", "mon-fri", "5"]),
    ),
)
BEAT_ENTRY = st.one_of(
    JSON,
    st.fixed_dictionaries(
        {"task": st.sampled_from(["app.t", "", "bad name"]), "schedule": BEAT_SCHEDULE},
        optional={"args": JSON, "kwargs": JSON, "options": JSON},
    ),
)


@SETTINGS
@given(
    entries=st.dictionaries(st.text(max_size=8), BEAT_ENTRY, max_size=4),
    zone=st.sampled_from(["UTC", "Europe/London", "Mars/Base", ""]),
)
def test_any_beat_schedule_gives_a_loadable_manifest(entries: dict[str, Any], zone: str) -> None:
    loads(celery_beat.translate(entries, stack="b", timezone=zone))


def test_celery_cli_lists_an_unknown_zone_and_the_output_installs(tmp_path: Any) -> None:
    """Through the installed command: exit 0, the crontab entry listed, the interval kept,
    and `app install --dry-run` accepts the file."""
    import os

    from cli_process import run_cronplane

    (tmp_path / "zoned.py").write_text(
        "from celery import Celery\n"
        "from celery.schedules import crontab\n"
        "app = Celery('zoned', set_as_current=False)\n"
        "app.conf.timezone = 'Europe/Lndon'\n"
        "app.conf.beat_schedule = {\n"
        "    'report': {'task': 'app.report', 'schedule': crontab(minute=0, hour=7)},\n"
        "    'ping': {'task': 'app.ping', 'schedule': 300.0},\n"
        "}\n"
    )
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = run_cronplane(
        "import", "celery-beat", "zoned:app", "-o", "app.yaml", env=env, cwd=tmp_path
    )
    assert done.code == 0, done.stderr
    assert (
        "not translated: report: the app's timezone: unknown time zone 'Europe/Lndon'"
        in done.stderr
    )
    database = {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cp.db'}"}
    assert run_cronplane("db", "upgrade", env=database, cwd=tmp_path).code == 0
    dry = run_cronplane("app", "install", "app.yaml", "--dry-run", env=database, cwd=tmp_path)
    assert dry.code == 0 and "1 created" in dry.stdout, dry.stderr
    strict = run_cronplane("import", "celery-beat", "zoned:app", "--strict", env=env, cwd=tmp_path)
    assert strict.code == 2
