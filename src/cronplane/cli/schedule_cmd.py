"""`cronplane schedule add|ls|info|enable|disable|pause|resume|window|rm|history|reset|run|backfill`.

Deliberately no `set` for a user row's cron (SPEC §8): rm and add again.
`window` changes only when a row may fire (start_at, end_at, max_runs).
Each command: parse, call one service method, render.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

import click

from cronplane.cli import hints, options, render, schedule_when_cmd, version_cmd
from cronplane.cli.field_options import spec_options, spec_values
from cronplane.cli.options import client, json_option, parse_json_object, scope_options, settings
from cronplane.cli.selection_cmd import by_selection
from cronplane.core.controls import MISSED, Missed
from cronplane.core.cron import parse
from cronplane.core.explain import explain
from cronplane.core.inputs import ScheduleSpec
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import CronplaneError, JobNotFound
from cronplane.processes.node import clock_for

REVISION = schedule_when_cmd.REVISION
# `schedule run --wait` exits with this when the job failed, expired or was cancelled,
ITEM_FAILED_EXIT = 1
# and with this when --timeout passed before the item reached a final status.
STILL_WAITING_EXIT = 8


@click.group()
@scope_options
def schedule() -> None:
    """Schedules: one row per (tenant, stack, environment, name)."""


for _command in (schedule_when_cmd.window, schedule_when_cmd.dst, *version_cmd.COMMANDS):
    schedule.add_command(_command)


@schedule.command("add")
@options.reason_option
@click.argument("name")
@spec_options
@json_option
@scope_options
@click.pass_context
def add(ctx: click.Context, /, name: str, as_json: bool, **fields: Any) -> None:
    """Create a user schedule NAME."""
    # The options are core.fields' rows, named after ScheduleSpec's fields.
    spec = ScheduleSpec(name=name, **spec_values(fields))
    s = settings(ctx)
    plane = client(ctx, writes=True)
    try:
        created = plane.create_schedule(s.scope, spec, actor=s.actor)
    except JobNotFound as error:
        hints.missing_job(plane, s.tenant, s.stack, error)
    hints.legacy_zone(created.timezone)
    render.schedule(created, as_json, parse(created.cron).describe())


@schedule.command("ls")
@click.option(
    "--all",
    "--all-stacks",
    "everywhere",
    is_flag=True,
    help="Every stack and environment of the tenant.",
)
@click.option(
    "-l", "--selector", default=None, help="Only rows a label selector selects: team=pay,!legacy."
)
@click.option(
    "-q", "--search", default=None, help="Only rows whose name, job, cron, title or labels say it."
)
@click.option("--source", type=click.Choice(["app", "user", "system"]), default=None)
@click.option("--enabled/--disabled", "enabled", default=None, help="Only enabled / disabled.")
@click.option("--job", default=None, help="Only schedules of this job.")
@click.option("--limit", type=int, default=100, show_default=True)
@click.option("--cursor", default=None, help="Continue after a previous page.")
@json_option
@scope_options
@click.pass_context
def ls(
    ctx: click.Context,
    everywhere: bool,
    selector: str | None,
    search: str | None,
    source: str | None,
    enabled: bool | None,
    job: str | None,
    limit: int,
    cursor: str | None,
    as_json: bool,
) -> None:
    """List schedules (the scope's, or with --all the tenant's), by name."""
    s = settings(ctx)
    plane = client(ctx)
    filters = ScheduleQuery(
        source=source, enabled=enabled, job=job, search=search, selector=selector
    )
    page = plane.list_schedules(
        s.tenant,
        replace(
            filters,
            stack=None if everywhere else s.stack,
            environment=None if everywhere else s.environment,
            cursor=cursor,
            limit=limit,
        ),
    )
    render.schedules(page.items, as_json, page.next_cursor)
    if not page.items and not everywhere and cursor is None:
        hint = hints.empty_listing(plane, s.tenant, f"{s.stack}/{s.environment}", filters)
        if hint is not None:
            click.echo(hint, err=True)


@schedule.command("info")
@click.argument("name")
@click.option("--next", "count", type=int, default=5, show_default=True, help="Upcoming runs.")
@json_option
@scope_options
@click.pass_context
def info(ctx: click.Context, name: str, count: int, as_json: bool) -> None:
    """Show one schedule, its description and its next runs."""
    s = settings(ctx)
    plane = client(ctx)
    row = hints.existing_schedule(plane, s.scope, name)
    try:
        cron = parse(row.cron)
    except CronplaneError as error:
        # A stored cron this version no longer reads (the dispatcher disabled the row
        # with X200900SCHCAL): show the row and why, so it can be fixed.
        render.schedule(row, as_json, cron_error=str(error))
        return
    upcoming: list[datetime] = []
    excluded: list[str] = []
    if row.next_run is not None:
        from cronplane.service.calendars import shown_exclusion

        # The preview's rule (core.explain: within the window, no more than the
        # runs left) from the nominal next run; each fire keeps the jitter offset.
        offset = timedelta(seconds=row.jitter_offset)
        nominal = row.next_run - offset - timedelta(microseconds=1)
        window = (row.start_at, row.end_at)
        found = explain(
            row.cron,
            row.timezone,
            nominal,
            count,
            window=window,
            runs_left=row.runs_left,
            dst=row.dst,
            exclusion=shown_exclusion(plane, row),
        )
        upcoming = [moment + offset for moment in found.next]
        excluded = list(found.excluded)
    render.schedule(row, as_json, cron.describe(), upcoming, excluded=excluded)


@schedule.command("enable")
@options.reason_option
@click.argument("name", required=False)
@by_selection("enable")
@REVISION
@json_option
@scope_options
@click.pass_context
def enable(ctx: click.Context, name: str, revision: int | None, as_json: bool) -> None:
    """Enable; the next run is computed from now (no back-fill)."""
    s = settings(ctx)
    render.schedule(
        client(ctx, writes=True).enable_schedule(s.scope, name, actor=s.actor, revision=revision),
        as_json,
    )


@schedule.command("disable")
@options.reason_option
@click.argument("name", required=False)
@by_selection("disable")
@REVISION
@json_option
@scope_options
@click.pass_context
def disable(ctx: click.Context, name: str, revision: int | None, as_json: bool) -> None:
    """Disable; the next run is cleared."""
    s = settings(ctx)
    render.schedule(
        client(ctx, writes=True).disable_schedule(s.scope, name, actor=s.actor, revision=revision),
        as_json,
    )


# `none` clears a bound or the limit; an omitted option leaves it as it is.
@schedule.command("rm")
@options.reason_option
@click.argument("name")
@REVISION
@json_option
@scope_options
@click.pass_context
def rm(ctx: click.Context, name: str, revision: int | None, as_json: bool) -> None:
    """Remove a user schedule (an app's: remove it from the manifest, or disable it)."""
    s = settings(ctx)
    removed = client(ctx, writes=True).remove_schedule(
        s.scope, name, actor=s.actor, revision=revision
    )
    if as_json:
        render.echo_json(removed.to_dict())
    else:
        click.echo(f"removed {removed.name}")


@schedule.command("reset")
@options.reason_option
@click.argument("name")
@REVISION
@json_option
@scope_options
@click.pass_context
def reset(ctx: click.Context, name: str, revision: int | None, as_json: bool) -> None:
    """Reset an app schedule to its manifest (clears the operator's overrides)."""
    s = settings(ctx)
    render.schedule(
        client(ctx, writes=True).reset_to_manifest(s.scope, name, actor=s.actor, revision=revision),
        as_json,
    )


@schedule.command("history")
@click.argument("name")
@click.option("--limit", type=int, default=50, show_default=True)
@json_option
@scope_options
@click.pass_context
def history(ctx: click.Context, name: str, limit: int, as_json: bool) -> None:
    """Changes and occurrences of one schedule, newest first."""
    render.events(client(ctx).schedule_history(settings(ctx).scope, name, limit=limit), as_json)


@schedule.command("run")
@click.argument("name", required=False)
@by_selection("run")
@click.option(
    "--wait",
    is_flag=True,
    help="Wait for a final outcome, across retries; exit 1 if the job failed, expired "
    "or was cancelled.",
)
@click.option(
    "--timeout", type=float, default=None, help="Give up waiting after this many s (exit 8)."
)
@click.option(
    "--payload",
    default=None,
    help="This run's payload instead of the schedule's: JSON object or @file.json.",
)
@json_option
@scope_options
@click.pass_context
def schedule_run(
    ctx: click.Context,
    name: str,
    wait: bool,
    timeout: float | None,
    payload: str | None,
    as_json: bool,
) -> None:
    """Enqueue NAME's job now (priority 5, expires in 5 h); next_run is untouched."""
    current = settings(ctx)
    given = parse_json_object(payload, "payload")
    runs = client(ctx, clock_for, writes=True)
    item = runs.run_now(current.scope, name, actor=current.actor, payload=given)
    if wait:
        item = runs.wait(current.tenant, item.id, timeout=timeout)
    if as_json:
        render.echo_json(item.to_dict())
    else:
        click.echo(f"{item.id} {item.status}" + (f": {item.error}" if item.error else ""))
    if not wait:
        return
    if not item.finished:
        click.echo(f"still {item.status} after {timeout:g} s; not waiting longer", err=True)
        ctx.exit(STILL_WAITING_EXIT)
    if item.status in ("failed", "expired", "cancelled"):
        ctx.exit(ITEM_FAILED_EXIT)


@schedule.command("pause")
@options.reason_option
@click.argument("name", required=False)
@by_selection("pause")
@click.option(
    "--until",
    default=None,
    help="Resume by itself at this ISO 8601 instant (naive: the schedule's zone).",
)
@click.option("--note", default=None, help="Why (shown in info, the listing and the console).")
@click.option(
    "--missed",
    type=click.Choice(MISSED),
    default=None,
    help="With --until: what the pause passed becomes when it ends by itself, as for "
    "resume --missed (default: skip).",
)
@REVISION
@json_option
@scope_options
@click.pass_context
def pause(
    ctx: click.Context,
    name: str,
    until: str | None,
    note: str | None,
    missed: Missed | None,
    revision: int | None,
    as_json: bool,
) -> None:
    """Pause NAME: each occurrence is recorded skipped-paused; what it passed is skipped,
    unless resume --missed (or, with --until, pause --missed) says otherwise."""
    s = settings(ctx)
    row = client(ctx, writes=True).pause_schedule(
        s.scope, name, actor=s.actor, until=until, note=note, revision=revision, missed=missed
    )
    if as_json:
        render.echo_json(row.to_dict())
    else:
        click.echo(f"paused {row.name} ({render.pause_text(row)})")


@schedule.command("resume")
@options.reason_option
@click.argument("name", required=False)
@by_selection("resume")
@click.option(
    "--missed",
    type=click.Choice(MISSED),
    default="skip",
    show_default=True,
    help="What the pause passed becomes: nothing, its latest occurrence, or each one "
    "(enqueued as a backfill).",
)
@REVISION
@json_option
@scope_options
@click.pass_context
def resume(
    ctx: click.Context, name: str, missed: Missed, revision: int | None, as_json: bool
) -> None:
    """Resume NAME now (not paused: nothing changes); the next occurrence fires."""
    s = settings(ctx)
    row = client(ctx, writes=True).resume_schedule(
        s.scope, name, actor=s.actor, revision=revision, missed=missed
    )
    if as_json:
        render.echo_json(row.to_dict())
    else:
        click.echo(f"resumed {row.name}; next run {render.when(row.next_run)}")


@schedule.command("backfill")
@click.argument("name")
@click.option("--from", "start", required=True, help="First instant (ISO 8601, inclusive).")
@click.option("--to", "end", required=True, help="Last instant (ISO 8601, exclusive).")
@click.option("--dry-run", is_flag=True, help="List the occurrences; enqueue nothing.")
@click.option(
    "--allow-overlap",
    is_flag=True,
    help="Enqueue even while the schedule has an item queued or running.",
)
@json_option
@scope_options
@click.pass_context
def backfill(
    ctx: click.Context,
    name: str,
    start: str,
    end: str,
    dry_run: bool,
    allow_overlap: bool,
    as_json: bool,
) -> None:
    """Enqueue one `backfill` item per occurrence of NAME in [--from, --to), in order."""
    s = settings(ctx)
    report = client(ctx, writes=not dry_run).backfill_schedule(
        s.scope,
        name,
        actor=s.actor,
        start=start,
        end=end,
        dry_run=dry_run,
        allow_overlap=allow_overlap,
    )
    render.backfill(report, as_json)
