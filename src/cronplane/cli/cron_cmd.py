"""`cronplane cron next|explain`: try an expression without touching any schedule.

Thin edge: parse options, call the core, print. `next` is the parser's own
answer (`cronplane.core.cron`: a bad expression is X400003INVSCH); `explain`
is `cronplane.core.explain`, the answer the API's `cron/explain` and the
editor give (X400001CRNINV). Errors are coded and `cli.main` prints
`CODE: message` and exits 2.

Kept light on purpose: no database, server or table-rendering imports, so
trying an expression starts in well under a second.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, tzinfo

import click

from cronplane.cli import hints
from cronplane.clock import SystemClock
from cronplane.core.cron import known_zone, parse, start_instant
from cronplane.core.dst import GAPS, REPEATS, DstPolicy
from cronplane.core.dst_notes import dst_rule
from cronplane.core.explain import explain as explain_expression


def _iso_utc(instant: datetime) -> str:
    return instant.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _start(after: str | None, zone: tzinfo) -> datetime:
    """`--after` as an aware instant; a naive value is a wall time in the zone."""
    if after is None:
        return SystemClock().now()
    try:
        parsed = datetime.fromisoformat(after)
    except ValueError as error:
        raise click.BadParameter(
            f"{after!r} is not an ISO-8601 date-time", param_hint="--after"
        ) from error
    return start_instant(parsed, zone)


_TZ = click.option(
    "--tz", "tz", default="UTC", show_default=True, help="IANA time zone the expression runs in."
)
_SEED = click.option("--seed", default=None, help="Schedule identity that resolves H fields.")
_GAP = click.option(
    "--dst-gap",
    type=click.Choice(GAPS),
    default="shift",
    show_default=True,
    help="A fixed time the spring jump skips: shift (run after the jump) or skip.",
)
_REPEAT = click.option(
    "--dst-repeat",
    type=click.Choice(REPEATS),
    default=None,
    help="Passes of a repeated autumn hour that run (default: Debian's).",
)
_AFTER = click.option(
    "--after",
    default=None,
    help="ISO-8601 start (exclusive); naive means wall time in --tz. Default: now.",
)


@click.group()
def cron() -> None:
    """Try cron expressions: next occurrences and explanations."""


@cron.command("next")
@click.argument("expr")
@_AFTER
@click.option("--count", "-n", default=5, show_default=True, type=click.IntRange(1, 10_000))
@_TZ
@_SEED
@_GAP
@_REPEAT
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def next_(
    expr: str,
    after: str | None,
    count: int,
    tz: str,
    seed: str | None,
    dst_gap: str,
    dst_repeat: str | None,
    as_json: bool,
) -> None:
    """Print the next COUNT occurrences of EXPR as UTC instants, one a line."""
    zone = known_zone(tz)
    hints.legacy_zone(tz)
    schedule = parse(expr, seed)
    dst = DstPolicy(dst_gap, dst_repeat)
    instants = [_iso_utc(i) for i in schedule.upcoming(_start(after, zone), count, zone, dst)]
    if as_json:
        _json({"expression": expr, "timezone": tz, "next": instants})
        return
    for instant in instants:
        click.echo(instant)


def _json(document: object) -> None:
    click.echo(json.dumps(document, indent=2, ensure_ascii=False))


@cron.command("explain")
@click.argument("expr")
@_AFTER
@_TZ
@_SEED
@_GAP
@_REPEAT
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def explain(
    expr: str,
    after: str | None,
    tz: str,
    seed: str | None,
    dst_gap: str,
    dst_repeat: str | None,
    as_json: bool,
) -> None:
    """Show EXPR normalized, described, its next 5 occurrences (zone and UTC), and what
    the clock changes of the next year do to it under the DST policy."""
    zone = known_zone(tz)
    hints.legacy_zone(tz)
    dst = DstPolicy(dst_gap, dst_repeat)
    explained = explain_expression(expr, tz, _start(after, zone), 5, seed, dst=dst)
    rule = dst_rule(explained.cron, dst)
    if as_json:
        _json(
            {
                "expression": expr,
                "normalized": explained.normalized,
                "description": explained.description,
                "timezone": tz,
                "dst_rule": rule,
                "dst_notes": list(explained.notes),
                "next": [
                    {"local": i.astimezone(zone).isoformat(), "utc": _iso_utc(i)}
                    for i in explained.next
                ],
            }
        )
        return
    click.echo(f"expression:  {expr}")
    click.echo(f"normalized:  {explained.normalized}")
    click.echo(f"description: {explained.description}")
    click.echo(f"time zone:   {tz}")
    click.echo(f"DST rule:    {rule}")
    click.echo(f"next 5 ({tz} | UTC):")
    for instant in explained.next:
        local = instant.astimezone(zone)
        click.echo(f"  {local.isoformat()} {local.tzname() or ''}  |  {_iso_utc(instant)}")
    for note in explained.notes:
        click.echo(f"note:        {note}")
