"""`cronplane app diff|promote --from-env A --to-env B` (issue 38): two environments of a
tenant compared field by field, and one promoted to the other.

Registered on the `app` group by `cli/app_cmd.py`. `--stack` on the command line
limits both to one stack (without it: every stack of the tenant). The diff prints
a token; `promote --diff-token T` refuses (exit 4, `X409382PRMCHG`) when a row
moved since that diff, writing nothing. (`--token` is the API token of `--url`,
as on every command.) The rules are service.promotion's.
"""

from __future__ import annotations

import json
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from cronplane.cli import render
from cronplane.cli.options import client, explicit_stack, json_option, scope_options, settings
from cronplane.core.codec import to_document
from cronplane.core.promotion import EnvironmentDiff, FieldDifference, ScheduleDifference
from cronplane.service import PromoteReport

FROM_ENV = click.option("--from-env", required=True, help="The source environment.")
TO_ENV = click.option("--to-env", required=True, help="The target environment.")
# Each status as a person reads it.
SHOWN = {
    "only_in_source": "only in source",
    "only_in_target": "only in target",
    "differs": "differs",
    "same": "same",
    "conflict": "conflict",
}


def _stack(ctx: click.Context) -> str | None:
    return settings(ctx).stack if explicit_stack(ctx) else None


@click.command("diff")
@FROM_ENV
@TO_ENV
@json_option
@scope_options
@click.pass_context
def diff(ctx: click.Context, from_env: str, to_env: str, as_json: bool) -> None:
    """Which schedules differ between two environments, field by field (overrides marked),
    and the token a promote may carry."""
    shown = client(ctx).diff_environments(settings(ctx).tenant, from_env, to_env, stack=_stack(ctx))
    if as_json:
        render.echo_json({**to_document(shown), "summary": shown.summary()})
        return
    _diff_table(shown)


@click.command("promote")
@FROM_ENV
@TO_ENV
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="NAMES",
    help="Only these schedules (NAME or STACK/NAME; comma-separated or repeated).",
)
@click.option(
    "--diff-token",
    "token",
    default=None,
    help="The token `app diff` printed: refuse (exit 4) if a row moved since.",
)
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--reason", default=None, help="Why: recorded on the versions it makes.")
@json_option
@scope_options
@click.pass_context
def promote(
    ctx: click.Context,
    from_env: str,
    to_env: str,
    only: tuple[str, ...],
    token: str | None,
    dry_run: bool,
    reason: str | None,
    as_json: bool,
) -> None:
    """Apply --from-env's schedule definitions to --to-env, all or nothing: create the
    missing ones, update the differing ones; rows only in --to-env are left alone."""
    s = settings(ctx)
    names = [name.strip() for given in only for name in given.split(",") if name.strip()]
    report = client(ctx, writes=not dry_run).promote_environment(
        s.tenant,
        from_env,
        to_env,
        actor=s.actor,
        stack=_stack(ctx),
        only=names or None,
        token=token,
        dry_run=dry_run,
        reason=reason,
    )
    if as_json:
        render.echo_json({**to_document(report), "summary": report.summary()})
        return
    _promote_table(report)


def _diff_table(shown: EnvironmentDiff) -> None:
    where = shown.stack or "every stack"
    counts = ", ".join(f"{n} {SHOWN[status]}" for status, n in shown.summary().items())
    click.echo(f"{shown.from_env} -> {shown.to_env} ({where}): {counts}")
    click.echo(f"token: {shown.token}")
    table = Table()
    for column in (
        "Status",
        "Schedule",
        "Field",
        f"{shown.to_env} (target)",
        f"{shown.from_env} (source)",
    ):
        table.add_column(column)
    for item in shown.schedules:
        if item.status != "same":
            _rows(table, SHOWN[item.status], item)
    if table.row_count:
        render.print_table(table)


def _promote_table(report: PromoteReport) -> None:
    verb = "would promote" if report.dry_run else "promoted"
    counts = ", ".join(f"{n} {what}" for what, n in report.summary().items())
    click.echo(f"{verb} {report.from_env} -> {report.to_env}: {counts}")
    table = Table()
    for column in ("Outcome", "Schedule", "Field", "was", "now"):
        table.add_column(column)
    for item in report.created:
        _rows(table, "would create" if report.dry_run else "created", item)
    for item in report.updated:
        _rows(table, "would update" if report.dry_run else "updated", item)
    for item in report.conflicts:
        _rows(table, "conflict (left)", item)
    if table.row_count:
        render.print_table(table)


def _rows(table: Table, outcome: str, item: ScheduleDifference) -> None:
    """One line per differing field; a schedule with no field compared gets one line."""
    if item.status == "conflict":
        kinds = f"{item.target_kind or '-'} row", f"{item.source_kind or '-'} row"
        table.add_row(outcome, escape(item.key), "owner", *kinds)
        return
    if not item.fields:
        whole = {
            "only_in_source": ("-", "(whole schedule)"),
            "only_in_target": ("(left alone)", "-"),
        }
        table.add_row(outcome, escape(item.key), "", *whole.get(item.status, ("", "")))
        return
    for number, change in enumerate(item.fields):
        table.add_row(
            outcome if number == 0 else "",
            escape(item.key) if number == 0 else "",
            change.field,
            escape(_value(change, "target")),
            escape(_value(change, "source")),
        )


def _value(change: FieldDifference, side: str) -> str:
    value: Any = getattr(change, side)
    text = "-" if value is None else value if isinstance(value, str) else json.dumps(value)
    if len(text) > 60:
        text = text[:59] + "…"
    return text + (" (override)" if getattr(change, f"{side}_override") else "")


# What `cli/app_cmd.py` registers on the `app` group.
COMMANDS = (diff, promote)
