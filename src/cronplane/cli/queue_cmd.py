"""`cronplane dispatcher|worker|serve`, `cronplane queue ls|info|cancel`, `schedule run`.

Edges only: each command builds the parts from settings and runs them, or
calls one use case of the service (`cli.options.client`) and renders the result.
"""

from __future__ import annotations

import logging
import signal
import threading
from types import FrameType
from uuid import UUID

import click

from cronplane.cli import render
from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.cli.schedule_cmd import schedule
from cronplane.core.model import QueueItem
from cronplane.dispatcher import DEFAULT_BATCH, DEFAULT_TTL
from cronplane.errors import InvalidRequest
from cronplane.node import Node, NodeOptions, clock_for
from cronplane.service.housekeeping import DEFAULT_RETENTION_DAYS
from cronplane.store.database import Database

ITEM_FAILED_EXIT = 1


def _database(ctx: click.Context) -> Database:
    database = Database(settings(ctx).database_url)
    database.ensure_schema()
    ctx.call_on_close(database.dispose)
    return database


def _logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    # Migration chatter is not what an operator watches a scheduler for.
    logging.getLogger("alembic").setLevel(logging.WARNING)


def _until_signal(node: Node) -> None:
    """Run until SIGINT/SIGTERM, then stop the node gracefully."""
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    node.start()
    while not stop.wait(1.0):
        pass
    node.stop()


TTL = click.option(
    "--ttl", type=float, default=DEFAULT_TTL, show_default=True, help="Leader lease TTL (s)."
)
BATCH = click.option(
    "--batch-size",
    type=int,
    default=DEFAULT_BATCH,
    show_default=True,
    help="Fires per transaction.",
)
LANES = click.option(
    "--lanes",
    type=click.IntRange(min=1),
    default=None,
    help="Fire transactions run at once on PostgreSQL [default: 2]; SQLite always runs one.",
)
RETENTION = click.option(
    "--retention-days",
    type=int,
    default=DEFAULT_RETENTION_DAYS,
    show_default=True,
    envvar="CRONPLANE_RETENTION_DAYS",
    help="Keep finished items and events this long (env CRONPLANE_RETENTION_DAYS).",
)
VERBOSE = click.option("-v", "--verbose", is_flag=True, help="Log at INFO.")


@click.command("dispatcher")
@click.option("--once", is_flag=True, help="Run one tick, print its report, exit.")
@TTL
@BATCH
@LANES
@RETENTION
@VERBOSE
@scope_options
@click.pass_context
def dispatcher(
    ctx: click.Context,
    once: bool,
    ttl: float,
    batch_size: int,
    lanes: int | None,
    retention_days: int,
    verbose: bool,
) -> None:
    """Fire due schedules (only the lease holder fires; run one per node)."""
    _logging(verbose)
    database = _database(ctx)
    node = Node(
        database,
        NodeOptions(
            workers=0,
            ttl=ttl,
            batch_size=batch_size,
            lanes=lanes,
            retention_days=retention_days,
        ),
    )
    if not once:
        _until_signal(node)
        return
    assert node.dispatcher is not None
    from cronplane.service.housekeeping import ensure_system_schedules

    ensure_system_schedules(database, node.clock, retention_days=retention_days)
    report = node.dispatcher.tick()
    node.dispatcher.release()
    counts = {outcome.value: n for outcome, n in report.counts.items()}
    click.echo(
        f"leader={report.leader} term={report.term} "
        + " ".join(f"{k}={v}" for k, v in counts.items())
        + (f" error={report.error}" if report.error else "")
    )


@click.command("worker")
@click.option("--once", is_flag=True, help="Run at most one item, then exit.")
@click.option("--threads", type=int, default=1, show_default=True, help="Worker threads.")
@VERBOSE
@scope_options
@click.pass_context
def worker(ctx: click.Context, once: bool, threads: int, verbose: bool) -> None:
    """Run queued items (python: targets and housekeeping)."""
    _logging(verbose)
    database = _database(ctx)
    node = Node(database, NodeOptions(dispatcher=False, workers=max(1, threads)))
    if once:
        click.echo("ran one item" if node.workers[0].run_once() else "queue empty")
        return
    _until_signal(node)


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the API listens on.")
@click.option("--port", type=int, default=8080, show_default=True, help="Port the API listens on.")
@click.option("--no-dispatcher", is_flag=True, help="Do not dispatch (API-only or worker node).")
@click.option("--no-worker", is_flag=True, help="Run no worker threads.")
@click.option("--workers", type=int, default=2, show_default=True, help="Worker threads.")
@TTL
@BATCH
@LANES
@RETENTION
@VERBOSE
@scope_options
@click.pass_context
def serve(
    ctx: click.Context,
    host: str,
    port: int,
    no_dispatcher: bool,
    no_worker: bool,
    workers: int,
    ttl: float,
    batch_size: int,
    lanes: int | None,
    retention_days: int,
    verbose: bool,
) -> None:
    """Serve the HTTP API and console, with a dispatcher and workers, until interrupted."""
    from cronplane.api.server import serve_api

    _logging(verbose or True)
    database = _database(ctx)
    workers = 0 if no_worker else workers
    options = NodeOptions(
        dispatcher=not no_dispatcher,
        workers=workers,
        ttl=ttl,
        batch_size=batch_size,
        lanes=lanes,
        retention_days=retention_days,
    )
    parts = ("dispatcher + " if not no_dispatcher else "") + f"{workers} worker(s)"
    click.echo(
        f"cronplane serve: http://{host}:{port} on {database.dialect}, {parts}; Ctrl-C stops"
    )
    serve_api(database, Node(database, options), host=host, port=port)


# -- queue items --------------------------------------------------------------


@click.group("queue")
@scope_options
def queue() -> None:
    """Queue items of the tenant: list, inspect, cancel."""


def _item_id(text: str) -> UUID:
    try:
        return UUID(text)
    except ValueError as error:
        raise InvalidRequest(f"{text!r} is not a queue item id") from error


def _show(item: QueueItem, as_json: bool) -> None:
    if as_json:
        render.echo_json(item.to_dict())
        return
    for key, value in item.to_dict().items():
        click.echo(f"{key:>16}: {value}")


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
    for item in items:
        click.echo(
            f"{item.id}  {item.status:<9} {item.source:<8} {item.stack}/{item.job:<24} "
            f"{render.when(item.scheduled_for or item.created_at)}  attempts={item.attempts}"
        )


@queue.command("info")
@click.argument("item_id")
@json_option
@scope_options
@click.pass_context
def queue_info(ctx: click.Context, item_id: str, as_json: bool) -> None:
    """One item, every field."""
    _show(client(ctx, clock_for).get_item(settings(ctx).tenant, _item_id(item_id)), as_json)


@queue.command("cancel")
@click.argument("item_id")
@json_option
@scope_options
@click.pass_context
def queue_cancel(ctx: click.Context, item_id: str, as_json: bool) -> None:
    """Cancel a queued item (running items finish)."""
    _show(client(ctx, clock_for).cancel_item(settings(ctx).tenant, _item_id(item_id)), as_json)


@schedule.command("run")
@click.argument("name")
@click.option("--wait", is_flag=True, help="Wait for the item to finish; exit 1 if the job failed.")
@click.option("--timeout", type=float, default=None, help="Give up waiting after this many s.")
@json_option
@scope_options
@click.pass_context
def schedule_run(
    ctx: click.Context, name: str, wait: bool, timeout: float | None, as_json: bool
) -> None:
    """Enqueue NAME's job now (priority 5, expires in 5 h); next_run is untouched."""
    current = settings(ctx)
    runs = client(ctx, clock_for)
    item = runs.run_now(current.scope, name, actor=current.actor)
    if wait:
        item = runs.wait(current.tenant, item.id, timeout=timeout)
    if as_json:
        render.echo_json(item.to_dict())
    else:
        click.echo(f"{item.id} {item.status}" + (f": {item.error}" if item.error else ""))
    if wait and item.status in ("failed", "expired", "cancelled"):
        ctx.exit(ITEM_FAILED_EXIT)


COMMANDS = (dispatcher, worker, serve, queue)
