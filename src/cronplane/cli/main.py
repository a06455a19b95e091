"""The `cronplane` command: the root group and the coded-error boundary."""

from __future__ import annotations

import importlib
import json
import logging
import os
import sys
from typing import NoReturn

import click

from cronplane import __version__
from cronplane.cli.options import scope_options
from cronplane.errors import CronplaneError, InvalidRequest

# Command name -> (module, attribute). A command's module, and whatever it needs,
# is imported only when that command runs (or when help lists them all), so
# `cron explain` does not pay for the server stack's imports.
COMMANDS: dict[str, tuple[str, str]] = {
    "cron": ("cron_cmd", "cron"),
    "schedule": ("schedule_cmd", "schedule"),
    "job": ("job_cmd", "job"),
    "app": ("app_cmd", "app"),
    "db": ("db_cmd", "db"),
    "token": ("token_cmd", "token"),
    "import": ("import_cmd", "import_"),
    "webhook": ("webhook_cmd", "webhook"),
    "queue": ("queue_cmd", "queue"),
    "alert": ("alert_cmd", "alert"),
    "audit": ("audit_cmd", "audit"),
    "tenant": ("tenant_cmd", "tenant"),
    "calendar": ("calendar_cmd", "calendar"),
    "shard": ("shard_cmd", "shard"),
    "dispatcher": ("process_cmd", "dispatcher"),
    "worker": ("process_cmd", "worker"),
    "serve": ("process_cmd", "serve"),
}


class LazyGroup(click.Group):
    """The root group: looks a command up in COMMANDS and imports it on demand."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        found = COMMANDS.get(cmd_name)
        if found is None:
            return None
        module = importlib.import_module(f"cronplane.cli.{found[0]}")
        command: click.Command = getattr(module, found[1])
        return command


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cronplane")
@scope_options
def cli() -> None:
    """cronplane: a multi-tenant cron control plane."""


# Loaded by the Temporal SDK (`import temporal --address`, a worker's temporal: items).
_TEMPORAL_BRIDGE = "temporalio.bridge.temporal_sdk_bridge"


def entry() -> None:
    """The `cronplane` console script and `python -m cronplane`: main(), then exit."""
    try:
        main()
    except SystemExit as done:
        _leave_without_finalizing(done.code)
        raise
    _leave_without_finalizing(0)


def _leave_without_finalizing(code: object) -> None:
    """Exit at once, skipping CPython's finalization, when the Temporal SDK ran here.

    Its Rust runtime keeps threads that can take the GIL while the interpreter is
    torn down, killing a finished process with SIGSEGV or SIGABRT instead of its
    exit code (temporalio/sdk-python#300; 2 runs in 12 of a failed `--address`
    import). Output is flushed and logging shut down first; nothing else is left
    to run. Without the SDK loaded this returns and Python exits normally. Only the
    console script does this: a process that calls main() itself (the tests) goes on.
    """
    if _TEMPORAL_BRIDGE not in sys.modules:
        return
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


def main() -> None:
    """Run the CLI; a coded error prints `CODE: message` on stderr (tests call this
    in-process; the console script is `entry`).

    Outside standalone mode click *returns* the code of `ctx.exit(n)` instead of
    exiting; it is passed on here, or `schedule run --wait` would exit 0 on failure.
    """
    as_json = _wants_json(sys.argv[1:])
    try:
        code = cli.main(standalone_mode=False)
    except CronplaneError as error:
        _refuse(error, as_json)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as error:
        if not as_json:
            error.show()
            sys.exit(error.exit_code)
        # A usage error is input refused before anything ran: the CLI's own X400007REQINV.
        usage = InvalidRequest(error.format_message(), {"usage": True})
        _echo_json(usage.to_dict())
        sys.exit(error.exit_code)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except Exception as error:
        lost = _connection_lost(error)
        if lost is None:
            raise
        _refuse(lost, as_json)
    if isinstance(code, int) and code:
        sys.exit(code)


def _wants_json(args: list[str]) -> bool:
    """Whether the command line asks for JSON (`--json` before any `--`)."""
    for arg in args:
        if arg == "--":
            return False
        if arg == "--json":
            return True
    return False


def _echo_json(document: dict[str, object]) -> None:
    click.echo(json.dumps(document, ensure_ascii=False, default=str), err=True)


def _refuse(error: CronplaneError, as_json: bool) -> NoReturn:
    """Print a coded error on stderr, as `CODE: message` or (under `--json`) the JSON body
    every surface answers, `{"code", "message", "detail"}`; exit with its class's code."""
    if as_json:
        _echo_json(error.to_dict())
    else:
        click.echo(str(error), err=True)
    sys.exit(error.exit_code)


def _connection_lost(error: Exception) -> CronplaneError | None:
    """X503001DBDOWN for a database that stopped answering after it was opened
    (opening one that does not answer is already coded: `open_database`)."""
    if "sqlalchemy" not in sys.modules:
        return None
    from sqlalchemy.exc import InterfaceError, OperationalError

    if not isinstance(error, OperationalError | InterfaceError):
        return None
    from cronplane.cli.options import opened_url
    from cronplane.store.database import unavailable

    return unavailable(opened_url() or "(the configured one)", error)
