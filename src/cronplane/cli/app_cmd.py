"""`cronplane app install FILE | uninstall STACK | sync FILE [--dry-run]`, and
`app diff|promote --from-env A --to-env B` (cli/promote_cmd.py).

The stack is the manifest's `name`; the environment is `--env`.
"""

from __future__ import annotations

from pathlib import Path

import click

from cronplane.cli import hints, promote_cmd, render
from cronplane.cli.options import client, explicit_stack, json_option, scope_options, settings
from cronplane.core.model import Scope
from cronplane.manifest import load_manifest
from cronplane.service import AppReport

DRY_RUN = click.option("--dry-run", is_flag=True, help="Show the plan; write nothing.")
MANIFEST = click.argument("file", type=click.Path(dir_okay=False, path_type=Path))


def _report(report: AppReport, as_json: bool) -> None:
    header = {
        "stack": report.stack,
        "dry_run": report.dry_run,
        "jobs_registered": list(report.jobs_registered),
        "jobs_updated": list(report.jobs_updated),
        "jobs_deactivated": list(report.jobs_deactivated),
    }
    render.plan(report.plan, as_json, header)


@click.group()
@scope_options
def app() -> None:
    """Apps: install a manifest (jobs + crons), sync its crons, uninstall; diff and
    promote environments."""


for _command in promote_cmd.COMMANDS:
    app.add_command(_command)


@app.command("install")
@MANIFEST
@DRY_RUN
@json_option
@scope_options
@click.pass_context
def install(ctx: click.Context, file: Path, dry_run: bool, as_json: bool) -> None:
    """Register the manifest's jobs, then sync its crons into --env."""
    s = settings(ctx)
    manifest = load_manifest(file)
    if s.stack != manifest.name and explicit_stack(ctx):
        click.echo(
            f"note: the manifest's name {manifest.name!r} is the stack it installs; "
            f"--stack {s.stack} is not used (an importer's --stack names the manifest)",
            err=True,
        )
    report = client(ctx, writes=not dry_run).install_app(
        s.tenant, s.environment, manifest, actor=s.actor, dry_run=dry_run
    )
    _report(report, as_json)


@app.command("sync")
@MANIFEST
@DRY_RUN
@json_option
@scope_options
@click.pass_context
def sync(ctx: click.Context, file: Path, dry_run: bool, as_json: bool) -> None:
    """Sync the manifest's crons only (its jobs must be registered)."""
    s = settings(ctx)
    manifest = load_manifest(file)
    scope = Scope(s.tenant, manifest.name, s.environment)
    plan = client(ctx, writes=not dry_run).sync(
        scope, manifest.crons, actor=s.actor, dry_run=dry_run
    )
    render.plan(plan, as_json, {"stack": manifest.name, "dry_run": dry_run})


@app.command("uninstall")
@click.argument("stack")
@DRY_RUN
@json_option
@scope_options
@click.pass_context
def uninstall(ctx: click.Context, stack: str, dry_run: bool, as_json: bool) -> None:
    """Remove the app's schedules from --env; deactivate its jobs when no env has any left."""
    s = settings(ctx)
    plane = client(ctx, writes=not dry_run)
    report = plane.uninstall_app(
        Scope(s.tenant, stack, s.environment), actor=s.actor, dry_run=dry_run
    )
    _report(report, as_json)
    if not (report.plan.removed or report.jobs_deactivated):
        note = hints.unknown_stack(plane, s.tenant, stack)
        if note is not None:
            click.echo(f"warning: {note}", err=True)
