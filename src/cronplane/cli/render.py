"""How results look: rich tables for people, JSON for scripts. No rules live here.

JSON output is keyed by the SPEC §2 column names (`Schedule.to_dict`):
listings print an array, single objects print an object.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cronplane.core.codec import to_document
from cronplane.core.fields import SCHEDULE_FIELDS
from cronplane.core.labels import labels_text
from cronplane.core.model import Job, Schedule
from cronplane.core.quotas import Usage
from cronplane.core.reconcile import SyncPlan
from cronplane.core.redact import redact_text, redact_value
from cronplane.events import Event


def _console() -> Console:
    # Made per call so it writes to whatever stdout is current (CliRunner swaps it);
    # a wide minimum keeps tables readable when stdout is not a terminal.
    if sys.stdout.isatty():
        return Console(file=sys.stdout)
    return Console(file=sys.stdout, width=200)


def print_table(table: Table) -> None:
    """Print one rich table."""
    _console().print(table)


def echo_json(value: Any) -> None:
    """Print one JSON document."""
    click.echo(json.dumps(value, indent=2, default=str, ensure_ascii=False))


def when(value: datetime | None) -> str:
    """A timestamp for people: `2026-01-05 12:15:00 UTC`, or `-`."""
    return "-" if value is None else value.strftime("%Y-%m-%d %H:%M:%S UTC")


def state(row: Schedule) -> str:
    """The row's derived state in the UI's words: ACTIVE, INACTIVE, PAUSED, ENDED, DONE."""
    return row.state.upper()


def runs(row: Schedule) -> str:
    """ "3 of 5 runs left", or how many fires so far when there is no limit."""
    if row.max_runs is None:
        return f"{row.run_count} so far, no limit"
    return f"{row.runs_left} of {row.max_runs} runs left"


def window(row: Schedule) -> str:
    """The active window, each bound or "open"."""
    return f"{when(row.start_at) if row.start_at else 'open'} .. " + (
        when(row.end_at) if row.end_at else "open"
    )


def pause_text(row: Schedule) -> str:
    """Who paused the row, since when, until when, and why (one line)."""
    parts = [f"by {row.paused_by} since {when(row.paused_at)}"]
    parts.append(f"until {when(row.paused_until)}" if row.paused_until else "until resumed")
    if row.paused_until and row.paused_missed in ("once", "all"):
        parts.append(f"missed at its end: {row.paused_missed}")
    if row.paused_note:
        parts.append(f"note: {row.paused_note}")
    return "; ".join(parts)


def schedules(rows: Sequence[Schedule], as_json: bool, next_cursor: str | None = None) -> None:
    """A listing: Name, Job, Cron, Zone, Status, Source, Last Run, Next Run."""
    if as_json:
        echo_json([row.to_dict() for row in rows])
        return
    table = Table(show_lines=False)
    for column in ("Name", "Stack", "Env", "Job", "Cron", "Zone", "Status", "Source"):
        table.add_column(column)
    table.add_column("Last Run", no_wrap=True)
    table.add_column("Next Run", no_wrap=True)
    for row in rows:
        table.add_row(
            row.name,
            row.stack,
            row.environment,
            row.job,
            row.cron,
            row.timezone,
            state(row),
            row.source + ("*" if row.overrides else ""),
            when(row.last_run),
            when(row.next_run),
        )
    console = _console()
    console.print(table)
    if next_cursor:
        click.echo(f"more: --cursor {next_cursor}", err=True)


def schedule(
    row: Schedule,
    as_json: bool,
    description: str | None = None,
    upcoming: Iterable[datetime] = (),
    cron_error: str | None = None,
    *,
    excluded: Sequence[str] = (),
) -> None:
    """One schedule in full, with its description and next occurrences (or, for a
    stored cron that no longer parses, the parser's error)."""
    upcoming = list(upcoming)
    if as_json:
        document = row.to_dict()
        if description is not None:
            document["description"] = description
            document["upcoming"] = [moment.isoformat() for moment in upcoming]
            document["excluded"] = list(excluded)
        if cron_error is not None:
            document["cron_error"] = cron_error
        echo_json(document)
        return
    table = Table(show_header=False, box=None)
    table.add_column("field", style="bold")
    table.add_column("value")
    table.add_row("Name", row.name)
    table.add_row("Scope", f"{row.tenant}/{row.stack}/{row.environment}")
    table.add_row("Job", row.job)
    table.add_row("Cron", row.cron + (f"  ({description})" if description else ""))
    if cron_error is not None:
        table.add_row("Cron error", f"[red]{escape(cron_error)}[/red]")
    table.add_row("Zone", row.timezone)
    table.add_row("Status", state(row))
    if row.paused:
        table.add_row("Paused", escape(pause_text(row)))
    table.add_row("Runs", runs(row))
    if row.start_at is not None or row.end_at is not None:
        table.add_row("Window", window(row))
    table.add_row("Source", row.source)
    for field in SCHEDULE_FIELDS:  # the plain fields, as their row in core.fields shows them
        if field.info is not None:
            table.add_row(field.label, escape(field.info(getattr(row, field.name))))
    if row.jitter:
        table.add_row("Jitter", f"{row.jitter}s (this row fires {row.jitter_offset}s late)")
    table.add_row("Last Run", when(row.last_run))
    table.add_row("Next Run", when(row.next_run))
    table.add_row("Created", when(row.created_at))
    table.add_row("Updated", when(row.updated_at))
    table.add_row("Revision", str(row.revision))
    table.add_row("Id", str(row.id))
    if row.overrides:
        table.add_row("Overrides", ", ".join(row.overrides))
    if upcoming:
        table.add_row("Upcoming", "\n".join(when(moment) for moment in upcoming))
    if excluded:
        table.add_row("Excluded days", escape("\n".join(excluded)))
    _console().print(table)


def backfill(report: Any, as_json: bool) -> None:
    """A backfill's occurrences and what became of each."""
    if as_json:
        echo_json(report.to_dict())
        return
    fate = dict.fromkeys(report.enqueued, "enqueued")
    fate.update(dict.fromkeys(report.already_fired, "already fired"))
    fate.update(dict.fromkeys(report.left_to_dispatcher, "left to the dispatcher"))
    if report.dry_run:
        fate.update(dict.fromkeys(report.enqueued, "would enqueue"))
    for at in report.occurrences:
        click.echo(f"{when(at)}  {fate.get(at, '-')}")
    verb = "would enqueue" if report.dry_run else "enqueued"
    click.echo(
        f"{report.schedule}: {len(report.occurrences)} occurrences, {verb} "
        f"{len(report.enqueued)}, already fired {len(report.already_fired)}"
    )


def jobs(rows: Sequence[Job], as_json: bool) -> None:
    """The job picker's columns: Code, Name, Type, Status (+ stack, target)."""
    if as_json:
        echo_json([row.to_dict() for row in rows])
        return
    table = Table()
    labelled = any(row.labels for row in rows)  # the column only when some job has labels
    columns = ("Code", "Name", "Type", "Status", "Stack", "Target") + ("Labels",) * labelled
    for column in columns:
        table.add_column(column, no_wrap=column not in ("Target", "Labels"))
    for row in rows:
        target = redact_text(row.target)
        cells = (row.name, row.title, row.kind, row.status.upper(), row.stack, target)
        table.add_row(*cells, *((labels_text(row.labels),) if labelled else ()))
    _console().print(table)


def job(row: Job, as_json: bool) -> None:
    """One job."""
    if as_json:
        echo_json(row.to_dict())
        return
    jobs([row], False)


# What `schedule history --json` shows of each event (its scope is the command's).
HISTORY_KEYS = (
    "id",
    "code",
    "actor",
    "message",
    "scheduled_for",
    "fired_at",
    "created_at",
    "detail",
)


def events(rows: Sequence[Event], as_json: bool) -> None:
    """A schedule's history, newest first."""
    if as_json:
        documents = (redact_value(to_document(event)) for event in rows)
        echo_json([{key: document[key] for key in HISTORY_KEYS} for document in documents])
        return
    table = Table()
    for column in ("At", "Code", "Actor", "Scheduled For", "Item", "Message"):
        table.add_column(column, no_wrap=column != "Message")
    shown = distinct_tails([str(e.item_id) for e in rows if e.item_id is not None])
    for e in rows:
        item = "-" if e.item_id is None else shown[str(e.item_id)]
        message = redact_text(e.message + coalesced_note(e.detail) + late_note(e.detail))
        table.add_row(
            when(e.created_at), e.code, e.actor, when(e.scheduled_for), item, escape(message)
        )
    _console().print(table)


def coalesced_note(detail: dict[str, Any] | None) -> str:
    """`, coalesced 3` when one decision stood for several missed occurrences."""
    count = (detail or {}).get("coalesced")
    if not isinstance(count, int) or count < 2:
        return ""
    return f", coalesced {count}{'+' if (detail or {}).get('coalesced_at_least') else ''}"


def late_note(detail: dict[str, Any] | None) -> str:
    """`, 12 ms late`: how long after its fire instant the dispatcher decided an occurrence."""
    late = (detail or {}).get("late_ms")
    return f", {late:,} ms late" if isinstance(late, int) else ""


MIN_TAIL = 8


def distinct_tails(ids: Sequence[str]) -> dict[str, str]:
    """Each id by its shortest tail (at least MIN_TAIL characters) that no other id
    shares: UUIDv7 ids made close together share their leading, time-ordered part."""
    unique = sorted(set(ids))
    length = MIN_TAIL
    while length < 36 and len({i[-length:] for i in unique}) < len(unique):
        length += 1
    return {i: ("…" + i[-length:] if length < len(i) else i) for i in unique}


def plan(result: SyncPlan, as_json: bool, header: dict[str, Any] | None = None) -> None:
    """A sync plan: one line per outcome, then conflicts and drift."""
    document = {**(header or {}), "plan": result.to_dict(), "summary": result.summary()}
    if as_json:
        echo_json(document)
        return
    for key, value in (header or {}).items():
        if isinstance(value, list | tuple):
            value = ", ".join(map(str, value)) or "-"
        click.echo(f"{key.replace('_', ' ')}: {value}")
    summary = result.summary()
    click.echo(", ".join(f"{count} {what}" for what, count in summary.items()))
    table = Table()
    for column in ("Outcome", "Name", "Detail"):
        table.add_column(column)
    for item in result.created:
        table.add_row("created", item.name, item.declared.cron)
    for update in result.updated:
        table.add_row("updated", update.name, ", ".join(sorted(update.changes)) or "declaration")
    for gone in result.removed:
        table.add_row("removed", gone.name, "")
    for conflict in result.conflicts:
        table.add_row("conflict", conflict.name, f"a {conflict.source} row has this name")
    for drift in result.drift:
        table.add_row(
            "drift", drift.name, f"{drift.field}: {drift.current!r} (declared {drift.declared!r})"
        )
    if table.row_count:
        _console().print(table)


def _against(used: int, limit: int | None) -> str:
    """`used / limit`, or `used` alone where there is no limit."""
    return str(used) if limit is None else f"{used} / {limit}"


def tenants(rows: Sequence[Usage], as_json: bool) -> None:
    """Tenants with usage against quota: Tenant, Schedules, Jobs, Fires/h, Queued, limits."""
    if as_json:
        echo_json([row.to_dict() for row in rows])
        return
    table = Table()
    columns = ("Tenant", "Schedules", "Jobs", "Fires (1 h)", "Queued", "Fires/min", "Min interval")
    for column in columns:
        table.add_column(column, no_wrap=True)
    for row in rows:
        quota = row.quota
        table.add_row(
            escape(row.tenant),
            _against(row.schedules, quota.max_schedules),
            _against(row.jobs, quota.max_jobs),
            str(row.fires_last_hour),
            _against(row.queued, quota.max_queued),
            "-" if quota.max_fires_per_minute is None else str(quota.max_fires_per_minute),
            "-" if quota.min_interval is None else f"{quota.min_interval} s",
        )
    _console().print(table)


def tenant(row: Usage, as_json: bool) -> None:
    """One tenant: each limit, what is used, and whether the tenant's own row sets it."""
    if as_json:
        echo_json(row.to_dict())
        return
    own = set(row.to_dict()["overrides"])
    used = {
        "max_schedules": row.schedules,
        "max_jobs": row.jobs,
        "max_queued": row.queued,
        "max_fires_per_minute": None,
        "min_interval": None,
    }
    table = Table(
        title=f"tenant {escape(row.tenant)} (fires in the last hour: {row.fires_last_hour})"
    )
    for column in ("Limit", "Used", "Quota", "Set by"):
        table.add_column(column, no_wrap=True)
    for name, value in row.quota.to_dict().items():
        count = used[name]
        table.add_row(
            name,
            "-" if count is None else str(count),
            "unlimited" if value is None else str(value),
            "tenant" if name in own else "platform",
        )
    _console().print(table)
