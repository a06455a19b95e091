"""`schedule pause|resume|enable|disable|run -l SELECTOR [-q TEXT] [--dry-run] [--yes]`.

`by_selection(action)` adds the selection's options to a single-row command:
given `-l` or `-q`, the command acts on every row they name (within the scope's
stack and environment, or the tenant's with `--all-stacks`) through one
service call (service.selections) instead of on NAME, and prints the report:
each row's outcome, then `ACTION: N changed, N refused, N already`. Exit 0,
or when a row was refused the exit code of the first refusal's class.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

import click

from cronplane.cli import render
from cronplane.cli.options import client, settings
from cronplane.codes import REGISTRY
from cronplane.core.queries import ScheduleQuery
from cronplane.core.selections import SelectionAction, SelectionReport
from cronplane.errors import exit_code_of
from cronplane.processes.node import clock_for

F = TypeVar("F", bound=Callable[..., Any])
# Options of the single-row command that a selection does not take.
_ONE_ROW_ONLY = ("revision", "wait", "timeout", "payload")


def by_selection(action: SelectionAction) -> Callable[[F], F]:
    """Give a single-row command (its NAME optional) the selection's options."""

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(**kwargs: Any) -> Any:
            picked = {key: kwargs.pop(key) for key in ("selector", "search", "everywhere")}
            dry_run, yes = kwargs.pop("dry_run"), kwargs.pop("yes")
            name = kwargs.get("name")
            if picked["selector"] is None and picked["search"] is None:
                if name is None:
                    raise click.UsageError("give NAME, or rows by -l SELECTOR and/or -q TEXT")
                if dry_run or yes or picked["everywhere"]:
                    raise click.UsageError("--dry-run, --yes and --all-stacks go with -l / -q")
                return command(**kwargs)
            given = [key for key in _ONE_ROW_ONLY if kwargs.get(key) not in (None, False)]
            if name is not None or given:
                shown = ", ".join(["NAME"] * (name is not None) + [f"--{k}" for k in given])
                raise click.UsageError(f"{shown}: one row's, not with -l / -q")
            options = {key: kwargs[key] for key in ("until", "note", "missed") if key in kwargs}
            _act(action, picked, dry_run=dry_run, confirm=yes, as_json=kwargs["as_json"], **options)
            return None

        for option in reversed(
            [
                click.option(
                    "-l", "--selector", default=None, help="The rows a label selector selects."
                ),
                click.option("-q", "--search", default=None, help="The rows whose text says it."),
                click.option(
                    "--all-stacks", "everywhere", is_flag=True, help="Every stack and environment."
                ),
                click.option(
                    "--dry-run", is_flag=True, help="List the selected rows; change nothing."
                ),
                click.option(
                    "--yes", is_flag=True, help="Confirm a selection of more than 1,000 rows."
                ),
            ]
        ):
            option(wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


def _act(
    action: SelectionAction,
    picked: dict[str, Any],
    *,
    dry_run: bool,
    confirm: bool,
    as_json: bool,
    **options: Any,
) -> None:
    ctx = click.get_current_context()
    s = settings(ctx)
    everywhere = picked["everywhere"]
    query = ScheduleQuery(
        stack=None if everywhere else s.stack,
        environment=None if everywhere else s.environment,
        selector=picked["selector"],
        search=picked["search"],
    )
    plane = client(ctx, clock_for if action == "run" else None, writes=True)
    report = plane.act_on_selection(
        s.tenant, action, query, actor=s.actor, dry_run=dry_run, confirm=confirm, **options
    )
    show(report, as_json)
    refused = [row for row in report.rows if row.outcome == "refused" and row.code]
    if refused:
        ctx.exit(exit_code_of(REGISTRY[str(refused[0].code)]))


def show(report: SelectionReport, as_json: bool) -> None:
    """The report: one line per row, then the counts (or the JSON document)."""
    if as_json:
        render.echo_json(report.to_dict())
        return
    changed = "would change" if report.dry_run else "changed"
    for row in report.rows:
        outcome = changed if row.outcome == "changed" else row.outcome
        why = f": {row.code} {row.message}" if row.code else ""
        item = f" (item {row.item_id})" if row.item_id else ""
        click.echo(f"{outcome:<12} {row.stack}/{row.environment}/{row.name}{item}{why}")
    click.echo(
        f"{report.action}{' (dry run)' if report.dry_run else ''}: "
        f"{report.count('changed')} {changed}, {report.count('refused')} refused, "
        f"{report.count('already')} already"
    )
