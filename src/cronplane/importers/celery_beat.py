"""A way in from celery beat: a Celery app's `beat_schedule` as a cronplane app.yaml.

:func:`translate` is a function of values (the schedule, the app's zone, the
stack's name) and returns the manifest document plus everything it could not
carry over; :func:`load_celery_app` is the only I/O (an import). Every beat
entry ends up in exactly one place: a cron of the manifest, or the `skipped`
list with its reason. Nothing is dropped silently.

| beat schedule                      | cron written                                          |
|------------------------------------|-------------------------------------------------------|
| ``crontab(m, h, dom, mon, dow)``   | ``"m h dom mon dow"`` in the app's zone               |
| ``timedelta`` / number of seconds  | ``every N minutes|hours|days`` in UTC (SPEC §3)      |
| … not a whole number of minutes    | ``every N seconds`` (``@every Ns``)                   |
| ``schedule(run_every=…)``          | as its interval                                       |
| ``solar(event, lat, lon)``         | skipped: no cron expression follows the sun           |
| a crontab in an unknown zone       | skipped (intervals, in UTC, still translate)          |
| fractional seconds (``2.5``)       | skipped: cronplane's grain is one second              |
| crontab restricting both day fields| skipped: Celery ANDs them, cron (Vixie) ORs them      |
| a crontab in a zone with DST       | ``dst: {repeat: first}``: beat runs a repeated wall   |
|                                    | time once, on its first pass                          |

Each distinct (task, routing options) becomes one job with target
``celery:TASK`` (so the user's Celery workers keep running the code); each
entry becomes one cron whose payload is ``{"args": [...], "kwargs": {...}}``,
the shape the celery target turns back into ``send_task(args, kwargs)``.
Intervals are written in UTC because a Celery interval is elapsed time, not a
wall-clock reading: a "1 day" interval must not become 23 or 25 hours at a DST
change. A crontab keeps the app's zone, in which Celery evaluated it, and
beat's reading of the autumn night (the first pass of a repeated hour only);
at the spring jump beat moves a skipped time by the gap's length (01:30 to
02:30), which no DST policy says: cronplane runs it at the jump (02:00).
An interval in seconds fires at the same spacing as in beat, but counted from
the Unix epoch (every instant t with t mod N = 0) rather than from beat's start.
"""

from __future__ import annotations

import importlib
import json
import math
import re
import sys
from collections.abc import Iterable, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any, Final

from cronplane.core import cron as cron_engine
from cronplane.core.cron_zones import known_zone
from cronplane.errors import InvalidRequest, ScheduleSyntax, UnknownZone
from cronplane.importers.translation import (
    CeleryJobs,
    Names,
    Skipped,
    Translation,
    Untranslatable,
    cron_name,
)

DAY: Final = 86400
ENTRY_KEYS: Final = frozenset({"task", "schedule", "args", "kwargs", "options", "relative"})
# Options of a beat entry that the celery target knows how to pass to send_task.
CARRIED_OPTIONS: Final = ("queue", "routing_key", "exchange", "priority", "expires", "headers")
_FULL_DAY_NAMES: Final = re.compile(
    r"\b(sun|mon|tues|wednes|thurs|fri|satur)day\b", flags=re.IGNORECASE
)
_TASK_NAME: Final = re.compile(r"[A-Za-z0-9_.:-]{1,255}")
__all__ = ["Skipped", "Translation", "Untranslatable", "translate", "translate_app"]


def load_celery_app(reference: str, search_path: str | Path | None = ".") -> Any:
    """Import `module:attribute` (or `module`, then its `app` or `celery`) and return it."""
    module_name, _, attribute = reference.partition(":")
    if not module_name:
        raise InvalidRequest(f"{reference!r} is not MODULE:APP", {"reference": reference})
    # Like `celery -A`, look in the working directory first.
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
    try:
        found: Any = importlib.import_module(module_name)
    except Exception as error:  # the user's module may fail in any way: report, don't crash
        raise InvalidRequest(
            f"cannot import {module_name!r}: {type(error).__name__}: {error}",
            {"reference": reference},
        ) from error
    names = attribute.split(".") if attribute else None
    if names is None:
        names = next(([n] for n in ("app", "celery") if hasattr(found, n)), ["app"])
    for part in names:
        if not hasattr(found, part):
            raise InvalidRequest(
                f"{module_name!r} has no attribute {'.'.join(names)!r}", {"reference": reference}
            )
        found = getattr(found, part)
    if not hasattr(found, "conf"):
        raise InvalidRequest(f"{reference!r} is not a Celery app", {"reference": reference})
    return found


def translate_app(app: Any, stack: str | None = None) -> Translation:
    """Translate a Celery app's `beat_schedule`, in its zone, into a manifest for `stack`."""
    conf = app.conf
    zone = str(conf.timezone or "UTC")
    notes: list[str] = []
    if not conf.enable_utc and not conf.timezone:
        notes.append(
            "the app sets enable_utc=False without a timezone (beat used the host's local "
            "time); crontab entries are written in UTC: add `timezone:` to each"
        )
    name = stack or cron_name(str(getattr(app, "main", "") or ""), "default")
    translation = translate(dict(conf.beat_schedule or {}), stack=name, timezone=zone)
    translation.notes[:0] = notes
    return translation


def translate(
    beat_schedule: Mapping[str, Any], *, stack: str, timezone: str = "UTC"
) -> Translation:
    """Translate `beat_schedule` entries; crontabs are read in `timezone`."""
    celery_jobs = CeleryJobs()
    crons: dict[str, dict[str, Any]] = {}
    names = Names()
    skipped: list[Skipped] = []
    notes: list[str] = []
    try:
        known_zone(timezone)
        bad_zone = None
    except UnknownZone as error:
        bad_zone = error.message
    for entry_name, entry in beat_schedule.items():
        try:
            job_spec, cron, zone, payload, entry_notes = _entry(entry, timezone)
            if bad_zone is not None and zone != "UTC":
                # Intervals are elapsed time (written in UTC): only crontabs need the zone.
                raise Untranslatable(f"the app's timezone: {bad_zone}")
        except Untranslatable as error:
            skipped.append(Skipped(str(entry_name), str(error)))
            continue
        job = celery_jobs.job_for(job_spec)
        entry_cron = names.claim(cron_name(str(entry_name), "entry"))
        declared: dict[str, Any] = {"job": job, "cron": cron}
        if zone != "UTC":
            declared["timezone"] = zone
            declared["dst"] = {"gap": "later", "repeat": "first"}
        if payload:
            declared["payload"] = payload
        crons[entry_cron] = declared
        notes += [f"{entry_name}: {note}" for note in entry_notes]
    document: dict[str, Any] = {"name": stack, "jobs": celery_jobs.jobs, "crons": crons}
    return Translation(document, skipped, notes)


def _entry(entry: Any, timezone: str) -> tuple[dict[str, Any], str, str, dict[str, Any], list[str]]:
    """(job spec, cron, zone, payload, notes) of one beat entry; Untranslatable otherwise."""
    if not isinstance(entry, Mapping):
        raise Untranslatable("the entry is not a mapping")
    task = entry.get("task")
    if not isinstance(task, str) or _TASK_NAME.fullmatch(task) is None:
        raise Untranslatable(f"task {task!r} is not a name a celery: target can hold")
    if "schedule" not in entry:
        raise Untranslatable("the entry has no schedule")
    cron, wall_clock = schedule_expression(entry["schedule"])
    zone = timezone if wall_clock else "UTC"
    payload: dict[str, Any] = {}
    try:
        args = list(entry.get("args") or ())
        kwargs = dict(entry.get("kwargs") or {})
    except (TypeError, ValueError) as error:
        raise Untranslatable(f"args must be a sequence and kwargs a mapping: {error}") from error
    if args:
        payload["args"] = args
    if kwargs:
        payload["kwargs"] = kwargs
    try:
        # Celery would serialize them as JSON too; anything JSON cannot hold stays behind.
        if json.loads(json.dumps(payload)) != payload:
            raise Untranslatable("args/kwargs change when sent as JSON (tuples, non-str keys)")
    except (TypeError, ValueError) as error:
        raise Untranslatable(f"args/kwargs are not JSON: {error}") from error
    raw_options = entry.get("options") or {}
    if not isinstance(raw_options, Mapping):
        raise Untranslatable(f"options {raw_options!r:.60} is not a mapping")
    options, notes = _options(raw_options)
    notes += [f"key {key!r} not carried over" for key in sorted(set(entry) - ENTRY_KEYS)]
    job_spec: dict[str, Any] = {"title": f"Celery task {task}", "target": f"celery:{task}"}
    if options:
        job_spec["options"] = options
    return job_spec, cron, zone, payload, notes


def schedule_expression(schedule: Any) -> tuple[str, bool]:
    """(cron text, whether it reads the wall clock) for one beat schedule value."""
    from celery import schedules as celery_schedules

    if isinstance(schedule, bool):
        raise Untranslatable(f"schedule {schedule!r} is not a schedule")
    if isinstance(schedule, timedelta):
        return interval_expression(schedule.total_seconds()), False
    if isinstance(schedule, int | float):
        return interval_expression(float(schedule)), False
    if isinstance(schedule, celery_schedules.solar):
        raise Untranslatable(
            f"solar schedule ({schedule.event} at {schedule.lat}, {schedule.lon}): "
            "no cron expression follows the sun"
        )
    if isinstance(schedule, celery_schedules.crontab):
        return crontab_expression(schedule), True
    if type(schedule) is celery_schedules.schedule:  # a subclass may redefine is_due
        return interval_expression(schedule.run_every.total_seconds()), False
    raise Untranslatable(f"schedule type {type(schedule).__name__} has no cron equivalent")


def interval_expression(seconds: float) -> str:
    """`every N days|hours|minutes` in the largest whole unit, else `every N seconds`;
    Untranslatable for a fractional or non-positive interval (the grain is one second)."""
    if not math.isfinite(seconds) or seconds <= 0 or seconds != int(seconds):
        raise Untranslatable(f"interval of {seconds:g} s: only whole seconds translate")
    whole = int(seconds)
    for unit, size in (("day", DAY), ("hour", 3600), ("minute", 60), ("second", 1)):
        if whole % size == 0:
            count = whole // size
            return f"every {count} {unit}{'s' if count != 1 else ''}"
    raise AssertionError("unreachable: every whole number is a multiple of one second")


def crontab_expression(schedule: Any) -> str:
    """The 5-field cron of a Celery crontab, checked by cronplane's parser."""
    return fields_expression(
        [
            _field(getattr(schedule, f"_orig_{name}", "*"))
            for name in ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
        ]
    )


def fields_expression(fields: list[str]) -> str:
    """Celery crontab fields (minute, hour, day_of_month, month_of_year, day_of_week, as
    text) as one cron with Celery's meaning; Untranslatable where cron's would differ."""
    fields = [field.strip().replace(" ", "") or "*" for field in fields]
    dom, dow = fields[2], fields[4]
    if not dom.startswith("*") and not dow.startswith("*"):
        raise Untranslatable(
            f"crontab restricts day_of_month ({dom}) and day_of_week ({dow}): Celery requires "
            "both to match, cron fires when either does"
        )
    fields[4] = _FULL_DAY_NAMES.sub(lambda m: m.group(0)[:3], dow)
    text = " ".join(fields)
    try:
        cron_engine.parse(text, seed="celery-beat")
    except ScheduleSyntax as error:
        raise Untranslatable(f"crontab {text!r} is not valid cron: {error.message}") from error
    return text


def _field(value: Any) -> str:
    """A crontab field as Celery was given it (str, int or a collection) in cron syntax."""
    if isinstance(value, str):
        return value.strip().replace(" ", "") or "*"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Iterable):
        return ",".join(str(item) for item in sorted(value))
    raise Untranslatable(f"crontab field {value!r} is not str, int or a collection")


def _options(options: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The job options the celery target honours, and a note for each one left out."""
    carried: dict[str, Any] = {}
    notes: list[str] = []
    for key, value in options.items():
        if key in ("queue", "exchange") and hasattr(value, "name"):
            value = value.name  # kombu Queue / Exchange objects: their names route the same
        ok = (
            (key in ("queue", "routing_key", "exchange") and isinstance(value, str) and value)
            or (key == "priority" and isinstance(value, int) and 0 <= value <= 255)
            or (key == "expires" and isinstance(value, int | float) and value > 0)
            or (key == "headers" and isinstance(value, dict) and "cronplane" not in value)
        )
        if key in CARRIED_OPTIONS and ok and not isinstance(value, bool):
            carried[key] = value
        else:
            notes.append(f"option {key}={value!r} not carried over")
    return carried, notes
