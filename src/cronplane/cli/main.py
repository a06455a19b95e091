"""The `cronplane` command: the root group and the coded-error boundary."""

from __future__ import annotations

import sys

import click

from cronplane import __version__
from cronplane.cli.options import scope_options
from cronplane.errors import CronplaneError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cronplane")
@scope_options
def cli() -> None:
    """cronplane: a multi-tenant cron control plane."""


def _register() -> None:
    # Each command group lives in its own module; the root only assembles them.
    from cronplane.cli import (
        app_cmd,
        cron_cmd,
        db_cmd,
        import_cmd,
        job_cmd,
        process_cmd,
        queue_cmd,
        schedule_cmd,
        token_cmd,
        webhook_cmd,
    )

    cli.add_command(cron_cmd.cron)
    cli.add_command(schedule_cmd.schedule)
    cli.add_command(job_cmd.job)
    cli.add_command(app_cmd.app)
    cli.add_command(db_cmd.db)
    cli.add_command(token_cmd.token)
    cli.add_command(import_cmd.import_)
    cli.add_command(webhook_cmd.webhook)
    cli.add_command(queue_cmd.queue)
    for command in process_cmd.COMMANDS:  # dispatcher, worker, serve
        cli.add_command(command)


_register()


def main() -> None:
    """Entry point: run the CLI; a coded error prints `CODE: message` on stderr.

    Outside standalone mode click *returns* the code of `ctx.exit(n)` instead of
    exiting; it is passed on here, or `schedule run --wait` would exit 0 on failure.
    """
    try:
        code = cli.main(standalone_mode=False)
    except CronplaneError as error:
        click.echo(str(error), err=True)
        sys.exit(error.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(1)
    except click.ClickException as error:
        error.show()
        sys.exit(error.exit_code)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    if isinstance(code, int) and code:
        sys.exit(code)
