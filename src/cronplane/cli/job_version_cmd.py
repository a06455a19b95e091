"""`job versions|diff|rollback`: a job's versions (issue 38), as `schedule`'s
(cli/version_cmd.py) for a job of the stack.

Registered on the `job` group by `cli/job_cmd.py`. Each command makes one call
(locally, or over the API with --url) and renders a table, or JSON with --json
(the documents the API answers). A refusal exits with its code's exit status
(docs/codes.md): 3 for an unknown job or version, 5 for a stale --revision.
"""

from __future__ import annotations

import click

from cronplane.cli import render
from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.cli.version_cmd import (
    changes_table,
    print_versions,
    report_rollback,
    rollback_options,
)
from cronplane.core.codec import to_document


@click.command("versions")
@click.argument("name")
@click.option("--limit", type=int, default=100, show_default=True)
@json_option
@scope_options
@click.pass_context
def versions(ctx: click.Context, name: str, limit: int, as_json: bool) -> None:
    """The versions of job NAME, newest first: who changed it, when, how and why."""
    s = settings(ctx)
    rows = client(ctx).list_job_versions(s.tenant, s.stack, name, limit=limit)
    if as_json:
        render.echo_json([to_document(row) for row in rows])
        return
    print_versions(rows, {"Target": "target", "Status": "status"})


@click.command("diff")
@click.argument("name")
@click.argument("first", type=int, required=False)
@click.argument("second", type=int, required=False)
@json_option
@scope_options
@click.pass_context
def diff(
    ctx: click.Context, name: str, first: int | None, second: int | None, as_json: bool
) -> None:
    """Version FIRST of job NAME against SECOND, field by field (default: the previous
    against the current)."""
    s = settings(ctx)
    shown = client(ctx).diff_job_versions(s.tenant, s.stack, name, first, second)
    if as_json:
        render.echo_json(to_document(shown))
        return
    before, after = shown.before.number, shown.after.number
    click.echo(f"job {name}: version {before} -> version {after}")
    changes_table(shown.changes, f"v{before}", f"v{after}")


@click.command("rollback")
@rollback_options
def rollback(
    ctx: click.Context,
    name: str,
    to: int,
    dry_run: bool,
    reason: str | None,
    revision: int | None,
    as_json: bool,
) -> None:
    """Make job NAME's definition version TO's again: a new version, made like an edit
    (an app's job holds it until the app's next install)."""
    s = settings(ctx)
    done = client(ctx, writes=not dry_run).rollback_job(
        s.tenant, s.stack, name, to=to, actor=s.actor, revision=revision, dry_run=dry_run,
        reason=reason,
    )  # fmt: skip
    if as_json:
        render.echo_json({**to_document(done), "job": done.job.to_dict()})
        return
    report_rollback(f"job {name}", to, done.changes, dry_run)


# What `cli/job_cmd.py` registers on the `job` group.
COMMANDS = (versions, diff, rollback)
