"""A way in from django-celery-beat: its tables, read without Django, as an app.yaml.

:func:`read_tasks` (``django_celery_beat_source.py``) is the only I/O: one
read-only transaction over ``django_celery_beat_periodictask`` and the
crontab, interval, clocked and solar schedule tables. :func:`translate` is a
function of the rows it returned.

| django-celery-beat                        | manifest                                              |
|-------------------------------------------|-------------------------------------------------------|
| crontab row (with its ``timezone``)       | ``cron`` with Celery's meaning (``minute`` ``*`` stays ``*``) + ``timezone`` |
| interval row (``every``, ``period``)      | ``every N seconds|minutes|hours|days``, in UTC         |
| clocked row (``one_off``)                 | ``once at <instant>`` (a one-off)                      |
| ``one_off`` on a crontab or interval      | ``max_runs: 1``                                        |
| solar row                                 | not translated: no cron expression follows the sun    |
| ``enabled``                               | ``enabled`` (the state the row is created in)         |
| ``start_time`` / ``expires``              | ``start_at`` / ``end_at``                              |
| ``args`` / ``kwargs`` (JSON text)         | ``payload: {args, kwargs}``                            |
| ``queue``, ``exchange``, ``routing_key``, ``priority``, ``headers`` | the celery job's options      |
| ``expire_seconds``                        | the celery job's ``options.expires``                  |

Naive datetimes (SQLite, or ``USE_TZ = False``) are read as UTC, as Django
stores them with ``USE_TZ = True`` (its default).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from cronplane.core.cron_zones import known_zone
from cronplane.errors import UnknownZone
from cronplane.importers.celery_beat import fields_expression, interval_expression
from cronplane.importers.django_celery_beat_source import (
    BeatTask,
    database_name,
    parsed_name,
    read_tasks,
)
from cronplane.importers.translation import (
    CeleryJobs,
    Names,
    Skipped,
    Translation,
    Untranslatable,
    cron_name,
)

__all__ = ["BeatTask", "database_name", "parsed_name", "read_tasks", "translate"]

PERIOD_SECONDS: Final = {"days": 86400, "hours": 3600, "minutes": 60, "seconds": 1}


def translate(tasks: Iterable[BeatTask], *, stack: str, now: datetime | None = None) -> Translation:
    """Translate periodic tasks into a manifest for `stack`; with `now`, tasks that are
    over (a one-off that ran or whose time passed, an expired task) are listed instead,
    and a `start_time` already past is left out."""
    celery_jobs = CeleryJobs()
    crons: dict[str, dict[str, Any]] = {}
    names = Names()
    skipped: list[Skipped] = []
    notes: list[str] = []
    for beat in tasks:
        row = beat.task
        label = str(row.get("name") or f"task {row.get('id')}")
        try:
            job_spec, declared, entry_notes = _task(beat, now)
        except Untranslatable as error:
            skipped.append(Skipped(label, str(error)))
            continue
        job = celery_jobs.job_for(job_spec)
        crons[names.claim(cron_name(label, "task"))] = {"job": job, **declared}
        notes += [f"{label}: {note}" for note in entry_notes]
    document: dict[str, Any] = {
        "name": cron_name(stack, "default"),
        "jobs": celery_jobs.jobs,
        "crons": crons,
    }
    return Translation(
        document, skipped, notes, command="django-celery-beat", noun="periodic tasks"
    )


def _task(beat: BeatTask, now: datetime | None) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(job spec, cron declaration, notes) of one periodic task; Untranslatable otherwise."""
    row = beat.task
    notes: list[str] = []
    task = row.get("task")
    if not isinstance(task, str) or not task:
        raise Untranslatable("the task has no task name")
    kinds = sorted(beat.schedules)
    if len(kinds) != 1:
        raise Untranslatable(
            "the task has no schedule row" if not kinds else f"the task has {len(kinds)} schedules"
        )
    kind = kinds[0]
    enabled = bool(row.get("enabled", True))
    ran = bool(row.get("total_run_count")) or row.get("last_run_at") is not None
    start, expires = _instant(row.get("start_time")), _instant(row.get("expires"))
    if now is not None:
        _over(kind, beat.schedules[kind], bool(row.get("one_off")), enabled, ran, expires, now)
        if start is not None and start <= now:
            start = None  # a window that opened already: cronplane never back-fills
    declared = _schedule(kind, beat.schedules[kind], bool(row.get("one_off")), notes)
    if not enabled:
        declared["enabled"] = False
    if start is not None and kind != "clocked":
        declared["start_at"] = start.isoformat()
    if expires is not None:
        # Beat runs nothing at or after `expires`; cronplane's end_at is the last
        # instant that may fire (inclusive), and nothing fires finer than a second.
        declared["end_at"] = (expires - timedelta(seconds=1)).isoformat()
    payload = _payload(row.get("args"), row.get("kwargs"))
    if payload:
        declared["payload"] = payload
    options = _options(row, notes)
    job_spec: dict[str, Any] = {"title": f"Celery task {task}", "target": f"celery:{task}"}
    if options:
        job_spec["options"] = options
    return job_spec, declared, notes


def _over(
    kind: str,
    schedule: Mapping[str, Any],
    one_off: bool,
    enabled: bool,
    ran: bool,
    expires: datetime | None,
    now: datetime,
) -> None:
    """Untranslatable when the task has nothing left to run at `now`, saying why."""
    if expires is not None and expires <= now:
        raise Untranslatable(f"expired at {expires.isoformat()}: beat runs it no more")
    if kind == "clocked":
        instant = _instant(schedule.get("clocked_time"))
        if instant is not None and instant <= now:
            if ran or not enabled:
                raise Untranslatable(
                    f"a finished one-off (clocked at {instant.isoformat()}, "
                    f"{'ran' if ran else 'disabled'}): nothing left to schedule"
                )
            raise Untranslatable(
                f"its clocked time {instant.isoformat()} has passed and it has not run: beat "
                "would run it once at its next start; run it by hand (cronplane schedule run "
                "or job run) if it is still wanted"
            )
    elif one_off and ran and not enabled:
        raise Untranslatable("a finished one_off task (it ran, and beat disabled it)")


def _schedule(
    kind: str, schedule: Mapping[str, Any], one_off: bool, notes: list[str]
) -> dict[str, Any]:
    """The cron fields of one schedule row."""
    declared: dict[str, Any]
    if kind == "solar":
        raise Untranslatable(
            f"solar schedule ({schedule.get('event')} at {_number(schedule.get('latitude'))}, "
            f"{_number(schedule.get('longitude'))}): no cron expression follows the sun"
        )
    if kind == "clocked":
        instant = _instant(schedule.get("clocked_time"))
        if instant is None:
            raise Untranslatable("the clocked schedule has no time")
        if not one_off:
            notes.append("a clocked schedule runs once whether one_off is set or not")
        if instant.microsecond:
            # cronplane's grain is one second; beat runs it at its first tick after.
            notes.append(
                f"clocked time {instant.isoformat()} has a fraction of a second: written as "
                "the next whole second"
            )
            instant = instant.replace(microsecond=0) + timedelta(seconds=1)
        return {"cron": f"once at {_iso_minutes(instant)}"}
    if kind == "interval":
        every, period = schedule.get("every"), str(schedule.get("period"))
        if not isinstance(every, int) or every < 1:
            raise Untranslatable(f"interval every={every!r} is not a whole number >= 1")
        if period == "microseconds":
            if every % 1_000_000:
                raise Untranslatable(
                    f"interval of {every} microseconds: only whole seconds translate"
                )
            seconds = every // 1_000_000
        elif period in PERIOD_SECONDS:
            seconds = every * PERIOD_SECONDS[period]
        else:
            raise Untranslatable(f"interval period {period!r} is unknown")
        declared = {"cron": interval_expression(seconds)}
    else:  # crontab
        fields = [
            str(schedule.get(name) or "*")
            for name in ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
        ]
        declared = {"cron": fields_expression(fields)}
        zone = str(schedule.get("timezone") or "UTC")
        try:
            known_zone(zone)
        except UnknownZone as error:
            raise Untranslatable(f"crontab timezone {zone!r} is not a known zone") from error
        if zone != "UTC":
            declared["timezone"] = zone
    if one_off:
        declared["max_runs"] = 1
    return declared


def _payload(args_text: Any, kwargs_text: Any) -> dict[str, Any]:
    """{args, kwargs} from the row's JSON texts (empty ones left out)."""
    try:
        args = json.loads(args_text) if args_text else []
        kwargs = json.loads(kwargs_text) if kwargs_text else {}
    except (TypeError, ValueError) as error:
        raise Untranslatable(f"args/kwargs are not JSON: {error}") from error
    if not isinstance(args, list) or not isinstance(kwargs, dict):
        raise Untranslatable("args must be a JSON list and kwargs a JSON object")
    payload: dict[str, Any] = {}
    if args:
        payload["args"] = args
    if kwargs:
        payload["kwargs"] = kwargs
    return payload


def _options(row: Mapping[str, Any], notes: list[str]) -> dict[str, Any]:
    """The celery job's options from the row's routing columns."""
    options: dict[str, Any] = {}
    for key in ("queue", "exchange", "routing_key"):
        if isinstance(row.get(key), str) and row[key]:
            options[key] = row[key]
    priority = row.get("priority")
    if priority is not None:
        if isinstance(priority, int) and 0 <= priority <= 255:
            options["priority"] = priority
        else:
            notes.append(f"priority {priority!r} not carried over (0-255)")
    if row.get("expire_seconds"):
        options["expires"] = int(row["expire_seconds"])
    headers = row.get("headers")
    if headers:
        try:
            decoded = headers if isinstance(headers, dict) else json.loads(headers)
        except (TypeError, ValueError):
            decoded = None
        if isinstance(decoded, dict) and decoded and "cronplane" not in decoded:
            options["headers"] = decoded
        elif decoded != {}:
            notes.append(f"headers {str(headers)[:80]!r} not carried over (not a JSON object)")
    return options


def _instant(value: Any) -> datetime | None:
    """An aware datetime from a column value (naive: UTC, as Django stores it)."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as error:
            raise Untranslatable(f"{value[:40]!r} is not a datetime") from error
    if not isinstance(value, datetime):
        raise Untranslatable(f"{value!r} is not a datetime")
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _iso_minutes(instant: datetime) -> str:
    """ISO 8601 with its offset, without seconds when they are zero (`2027-01-01T03:00+00:00`)."""
    if instant.second:
        return instant.isoformat(timespec="seconds")
    return instant.isoformat(timespec="minutes")


def _number(value: Any) -> str:
    return f"{float(value):g}" if isinstance(value, float | Decimal) else str(value)
