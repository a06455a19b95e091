"""`cronplane dispatcher|worker|serve`: the long-running processes.

Edges only: each command builds a node's parts from settings and runs them
until a signal (or one step, with `--once`).
"""

from __future__ import annotations

import json
import logging
import signal
import threading
from types import FrameType

import click

from cronplane.cli.options import database, json_option, scope_options, settings
from cronplane.cli.shard_setup import shard_databases
from cronplane.core.lead import MAX_LEAD
from cronplane.processes.collector import tune_collector
from cronplane.processes.dispatcher import DEFAULT_BATCH, DEFAULT_FIRE_AHEAD, DEFAULT_TTL
from cronplane.processes.node import Node, NodeOptions
from cronplane.processes.shard_node import ShardNode
from cronplane.processes.worker import DEFAULT_CLAIM_BATCH
from cronplane.service.housekeeping import DEFAULT_RETENTION_DAYS
from cronplane.store.database import Database


def _database(ctx: click.Context) -> Database:
    # A bad CRONPLANE_LISTEN_URL stops start-up (X400009DBUNSP), not a listener thread later.
    from cronplane.store.dialects.conninfo import listen_conninfo

    listen_conninfo()
    return database(ctx, writes=True)


def _node(ctx: click.Context, database: Database, options: NodeOptions) -> Node | ShardNode:
    """A Node over the database; a ShardNode when it lists shards (or settings name some)."""
    registry = shard_databases(ctx, database)
    if len(registry.shards()) == 1:
        return Node(database, options)
    return ShardNode(registry, options)


class JsonLines(logging.Formatter):
    """`--json` logs: one JSON object a line (time, level, logger, message)."""

    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(
            {
                "time": self.formatTime(record),
                "level": record.levelname,
                "logger": record.name,
                "message": record.getMessage(),
            }
        )


def _logging(verbose: bool, as_json: bool = False) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    if as_json:
        for handler in logging.getLogger().handlers:
            handler.setFormatter(JsonLines())
    # Migration chatter is not what an operator watches a scheduler for.
    logging.getLogger("alembic").setLevel(logging.WARNING)


def _until_signal(node: Node | ShardNode) -> None:
    """Run until SIGINT/SIGTERM, then stop the node gracefully."""
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    node.start()
    # As `serve` does: start-up's objects out of the collector's passes, which over them
    # paused a run's bookkeeping by tens of milliseconds (and the record's finish with it).
    tune_collector()
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
FIRE_AHEAD = click.option(
    "--fire-ahead",
    type=click.FloatRange(min=0, max=1, max_open=True),
    default=DEFAULT_FIRE_AHEAD,
    show_default=True,
    help=(
        "Seconds before an instant its rows are committed, as of it (claimable at it); a "
        f"burst starts earlier by the time it should take, {MAX_LEAD:g} s ahead at most; "
        "0: at it."
    ),
)
CONCURRENCY = click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Items each worker thread runs at once (a thread pool, for I/O-bound targets).",
)
CLAIM_BATCH = click.option(
    "--claim-batch",
    type=click.IntRange(min=1),
    default=DEFAULT_CLAIM_BATCH,
    show_default=True,
    help="Most items a worker thread claims per transaction (fewer while items are slow).",
)
POOL = click.option(
    "--pool",
    type=click.Choice(["thread", "process"]),
    default="thread",
    show_default=True,
    help="Run python: targets in the worker's threads, or in child processes that a "
    "timeout or a cancel kills (docs/controls.md).",
)
TENANT_LIMIT = click.option(
    "--tenant-max-concurrency",
    "tenant_limit",
    type=click.IntRange(min=1),
    default=None,
    envvar="CRONPLANE_TENANT_MAX_CONCURRENCY",
    help="Running items per tenant, at most (env CRONPLANE_TENANT_MAX_CONCURRENCY; "
    "set the same on every worker).",
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
@FIRE_AHEAD
@RETENTION
@VERBOSE
@json_option
@scope_options
@click.pass_context
def dispatcher(
    ctx: click.Context,
    once: bool,
    ttl: float,
    batch_size: int,
    lanes: int | None,
    fire_ahead: float,
    retention_days: int,
    verbose: bool,
    as_json: bool,
) -> None:
    """Fire due schedules (only the lease holder fires; run one per node).
    `--json`: the --once report as an object; log lines as JSON objects."""
    _logging(verbose, as_json)
    database = _database(ctx)
    options = NodeOptions(
        workers=0,
        ttl=ttl,
        batch_size=batch_size,
        lanes=lanes,
        fire_ahead=fire_ahead,
        retention_days=retention_days,
    )
    if not once:
        _until_signal(_node(ctx, database, options))
        return
    node = Node(database, options)
    assert node.dispatcher is not None
    from cronplane.service.housekeeping import ensure_system_schedules

    ensure_system_schedules(database, node.clock, retention_days=retention_days)
    report = node.dispatcher.tick()
    node.dispatcher.release()
    counts = {outcome.value: n for outcome, n in report.counts.items()}
    if as_json:
        document = {"leader": report.leader, "term": report.term, "counts": counts}
        click.echo(json.dumps({**document, "error": report.error or None}, indent=2))
        return
    click.echo(
        f"leader={report.leader} term={report.term} "
        + " ".join(f"{k}={v}" for k, v in counts.items())
        + (f" error={report.error}" if report.error else "")
    )


@click.command("worker")
@click.option("--once", is_flag=True, help="Run at most one item, then exit.")
@click.option("--threads", type=int, default=1, show_default=True, help="Worker threads.")
@CONCURRENCY
@CLAIM_BATCH
@POOL
@TENANT_LIMIT
@VERBOSE
@json_option
@scope_options
@click.pass_context
def worker(
    ctx: click.Context,
    once: bool,
    threads: int,
    concurrency: int,
    claim_batch: int,
    pool: str,
    tenant_limit: int | None,
    verbose: bool,
    as_json: bool,
) -> None:
    """Run queued items (python: targets and housekeeping).
    `--json`: `{"ran": true|false}` with --once; log lines as JSON objects."""
    _logging(verbose, as_json)
    database = _database(ctx)
    options = NodeOptions(
        dispatcher=False,
        workers=max(1, threads),
        concurrency=1 if once else concurrency,
        claim_batch=1 if once else claim_batch,
        pool=pool,
        tenant_limit=tenant_limit,
    )
    if once:
        ran = Node(database, options).workers[0].run_once()
        if as_json:
            click.echo(json.dumps({"ran": ran}))
        else:
            click.echo("ran one item" if ran else "queue empty")
        return
    _until_signal(_node(ctx, database, options))


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the API listens on.")
@click.option("--port", type=int, default=8080, show_default=True, help="Port the API listens on.")
@click.option("--no-dispatcher", is_flag=True, help="Do not dispatch (API-only or worker node).")
@click.option("--no-worker", is_flag=True, help="Run no worker threads.")
@click.option("--workers", type=int, default=2, show_default=True, help="Worker threads.")
@TTL
@BATCH
@LANES
@FIRE_AHEAD
@RETENTION
@CONCURRENCY
@CLAIM_BATCH
@POOL
@TENANT_LIMIT
@VERBOSE
@json_option
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
    fire_ahead: float,
    retention_days: int,
    concurrency: int,
    claim_batch: int,
    pool: str,
    tenant_limit: int | None,
    verbose: bool,
    as_json: bool,
) -> None:
    """Serve the HTTP API and console, with a dispatcher and workers, until interrupted.
    `--json`: the start line and log lines as JSON objects."""
    from cronplane.api.server import serve_api
    from cronplane.settings import oidc_settings, read_url_setting
    from cronplane.store.database import read_replica

    _logging(verbose or True, as_json)
    replica = read_replica(read_url_setting())  # a bad CRONPLANE_READ_URL stops start-up
    oidc = oidc_settings()  # and so does a bad CRONPLANE_OIDC_* (X400390OIDCFG)
    database = _database(ctx)
    minimum = settings(ctx).min_interval  # so does a bad CRONPLANE_MIN_INTERVAL
    workers = 0 if no_worker else workers
    options = NodeOptions(
        dispatcher=not no_dispatcher,
        workers=workers,
        ttl=ttl,
        batch_size=batch_size,
        lanes=lanes,
        fire_ahead=fire_ahead,
        retention_days=retention_days,
        concurrency=concurrency,
        claim_batch=claim_batch,
        pool=pool,
        tenant_limit=tenant_limit,
    )
    parts = ("dispatcher + " if not no_dispatcher else "") + f"{workers} worker(s)"
    if as_json:
        started = {"url": f"http://{host}:{port}", "database": database.dialect}
        click.echo(json.dumps({**started, "dispatcher": not no_dispatcher, "workers": workers}))
    else:
        click.echo(
            f"cronplane serve: http://{host}:{port} on {database.dialect}, {parts}; Ctrl-C stops"
        )
    if replica is not None:
        ctx.call_on_close(replica.dispose)
    serve_api(
        database,
        _node(ctx, database, options),
        host=host,
        port=port,
        min_interval=minimum,
        replica=replica,
        oidc=oidc,
    )


COMMANDS = (dispatcher, worker, serve)
