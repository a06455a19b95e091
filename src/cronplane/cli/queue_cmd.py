"""`cronplane queue ls|info|logs|cancel`: the tenant's queue items.

Edges only: each command calls one use case of the service (`cli.options.client`,
with the node's clock) and renders the result.
"""

from __future__ import annotations

import json
from datetime import datetime
from uuid import UUID

import click
from rich.markup import escape
from rich.table import Table

from cronplane.cli import render, run_log
from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.core.model import QueueItem
from cronplane.errors import InvalidRequest
from cronplane.processes.node import clock_for


@click.group("queue")
@scope_options
def queue() -> None:
    """Queue items of the tenant: list, inspect, cancel."""


def _item_id(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError as error:
        raise InvalidRequest(f"{text!r} is not a queue item id") from error


def _value(value: object) -> str:
    """A field as people read it: `-` for none, times in UTC, documents as JSON."""
    if value is None:
        return "-"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _show(item: QueueItem, as_json: bool) -> None:
    if as_json:
        render.echo_json(item.to_dict())
        return
    table = Table(show_header=False, box=None)
    table.add_column("field", style="bold")
    table.add_column("value")
    # The document, not the record: it is what redaction (core.redact) has masked.
    for name, value in item.to_dict().items():
        shown = _value(value)
        if name.endswith(("_at", "_for")) and isinstance(value, str):
            shown = render.when(datetime.fromisoformat(value))
        table.add_row(name.replace("_", " ").capitalize(), escape(shown))
    render._console().print(table)


@queue.command("ls")
@click.option("--status", default=None, help="Only items with this status.")
@click.option("--limit", type=int, default=50, show_default=True)
@json_option
@scope_options
@click.pass_context
def queue_ls(ctx: click.Context, status: str | None, limit: int, as_json: bool) -> None:
    """Items newest first."""
    items = client(ctx, clock_for).list_items(settings(ctx).tenant, status=status, limit=limit)
    if as_json:
        render.echo_json([item.to_dict() for item in items])
        return
    table = Table()
    for column in ("Id", "Status", "Source", "Job", "For", "Attempts"):
        table.add_column(column, no_wrap=True)
    for item in items:
        table.add_row(
            str(item.id),
            item.status,
            item.source,
            escape(f"{item.stack}/{item.job}"),
            render.when(item.scheduled_for or item.created_at),
            f"{item.attempts}/{item.max_attempts}",
        )
    render._console().print(table)


@queue.command("info")
@click.argument("item_id")
@json_option
@scope_options
@click.pass_context
def queue_info(ctx: click.Context, item_id: str, as_json: bool) -> None:
    """One item, every field."""
    _show(client(ctx, clock_for).get_item(settings(ctx).tenant, _item_id(item_id)), as_json)


@queue.command("logs")
@click.argument("item_id")
@json_option
@scope_options
@click.pass_context
def queue_logs(ctx: click.Context, item_id: str, as_json: bool) -> None:
    """ITEM_ID's attempts with their timings, errors and output, and its events.

    Output by target: `command:` stdout and stderr (each its last 64 KiB),
    `python:` the records it logged (the last 64 Ki characters), `webhook:` the
    answer's status and body excerpt. An unknown id exits 3 (X404904ITMNFD).
    """
    log = client(ctx, clock_for).item_logs(settings(ctx).tenant, _item_id(item_id))
    run_log.show(log, as_json)


@queue.command("cancel")
@click.argument("item_id")
@json_option
@scope_options
@click.pass_context
def queue_cancel(ctx: click.Context, item_id: str, as_json: bool) -> None:
    """Cancel ITEM_ID: a queued item at once; a running one is asked to stop.

    The worker holding a running item stops it (a process-pool worker kills
    its child) and records `cancelled`. A finished item exits 4 (X409200ITMFIN).
    """
    current = settings(ctx)
    item = client(ctx, clock_for, writes=True).cancel_item(
        current.tenant, _item_id(item_id), actor=current.actor
    )
    _show(item, as_json)
