"""`schedule window` and `schedule dst`: change when a schedule may fire (its active window
and run limit) and what it does at the clock changes (its DST policy, core.dst).

Registered on the `schedule` group by `cli/schedule_cmd.py`.
"""

from __future__ import annotations

from typing import Any

import click

from cronplane.cli import render
from cronplane.cli.options import client, json_option, reason_option, scope_options, settings
from cronplane.core.dst import GAPS, REPEATS
from cronplane.core.inputs import UNSET, SchedulePatch
from cronplane.errors import InvalidMaxRuns

REVISION = click.option(
    "--revision", type=int, default=None, help="Refuse (exit 5) unless the row is at this revision."
)
_CLEAR = "none"
# `--dst-repeat default`: back to Debian's choice by the expression (stored as null).
_DEFAULT = "default"


def _window_value(text: str | None, as_int: bool = False) -> Any:
    if text is None:
        return UNSET
    if text.strip().lower() == _CLEAR:
        return None
    if not as_int:
        return text
    try:
        return int(text)
    except ValueError:
        raise InvalidMaxRuns(
            f"max_runs must be a whole number or 'none', not {text[:40]!r}", {"field": "max_runs"}
        ) from None


def _changed(ctx: click.Context, name: str, patch: SchedulePatch, revision: int | None) -> Any:
    s = settings(ctx)
    return client(ctx, writes=True).update_schedule(
        s.scope, name, patch, actor=s.actor, revision=revision
    )


@click.command("window")
@reason_option
@click.argument("name")
@click.option(
    "--start-at", default=None, help="ISO 8601 instant (naive: the row's zone); none clears."
)
@click.option(
    "--end-at", default=None, help="ISO 8601 instant (naive: the row's zone); none clears."
)
@click.option("--max-runs", default=None, help="Fires before it ends; none: no limit.")
@REVISION
@json_option
@scope_options
@click.pass_context
def window(
    ctx: click.Context,
    name: str,
    start_at: str | None,
    end_at: str | None,
    max_runs: str | None,
    revision: int | None,
    as_json: bool,
) -> None:
    """Change when NAME may fire: its active window and run limit.

    A later end_at or a higher max_runs revives an ended row; the next run is
    computed from now (no back-fill).
    """
    patch = SchedulePatch(
        start_at=_window_value(start_at),
        end_at=_window_value(end_at),
        max_runs=_window_value(max_runs, as_int=True),
    )
    render.schedule(_changed(ctx, name, patch, revision), as_json)


@click.command("dst")
@reason_option
@click.argument("name")
@click.option(
    "--dst-gap",
    type=click.Choice(GAPS),
    default=None,
    help="A fixed time the spring jump skips: shift (run after the jump) or skip.",
)
@click.option(
    "--dst-repeat",
    type=click.Choice((*REPEATS, _DEFAULT)),
    default=None,
    help="Passes of a repeated autumn hour that run; default: Debian's choice.",
)
@REVISION
@json_option
@scope_options
@click.pass_context
def dst(
    ctx: click.Context,
    name: str,
    dst_gap: str | None,
    dst_repeat: str | None,
    revision: int | None,
    as_json: bool,
) -> None:
    """Change what NAME does at the clock changes: its DST policy (docs/cron.md).

    `cronplane cron explain EXPR --tz ZONE --dst-gap … --dst-repeat …` shows what
    a policy does before it is saved.
    """
    repeat: Any = UNSET if dst_repeat is None else None if dst_repeat == _DEFAULT else dst_repeat
    gap: Any = UNSET if dst_gap is None else dst_gap
    patch = SchedulePatch(dst_gap=gap, dst_repeat=repeat)
    render.schedule(_changed(ctx, name, patch, revision), as_json)
