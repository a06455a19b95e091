"""`cronplane job ls|info|add`: job definitions per (tenant, stack); `versions|diff|rollback`
(cli/job_version_cmd.py) their versions."""

from __future__ import annotations

import click

from cronplane.cli import job_version_cmd, render
from cronplane.cli.options import client, json_option, parse_json_object, scope_options, settings
from cronplane.core.inputs import JobSpec
from cronplane.core.labels import parse_pairs


@click.group()
@scope_options
def job() -> None:
    """Jobs (processors): what schedules enqueue, and who runs them."""


for _command in job_version_cmd.COMMANDS:
    job.add_command(_command)


@job.command("ls")
@click.option("--all", "everywhere", is_flag=True, help="Every stack of the tenant.")
@click.option("--status", type=click.Choice(["active", "inactive"]), default=None)
@click.option(
    "-l", "--selector", default=None, help="Only jobs a label selector selects: team=pay,!legacy."
)
@json_option
@scope_options
@click.pass_context
def ls(
    ctx: click.Context, everywhere: bool, status: str | None, selector: str | None, as_json: bool
) -> None:
    """List jobs of the stack (or, with --all, of the tenant)."""
    s = settings(ctx)
    stack = None if everywhere else s.stack
    rows = client(ctx).list_jobs(s.tenant, stack, status=status, selector=selector)
    render.jobs(rows, as_json)


@job.command("info")
@click.argument("name")
@json_option
@scope_options
@click.pass_context
def info(ctx: click.Context, name: str, as_json: bool) -> None:
    """Job NAME of the stack (its labels included)."""
    s = settings(ctx)
    render.job(client(ctx).get_job(s.tenant, s.stack, name), as_json)


@job.command("add")
@click.argument("name")
@click.option(
    "--target",
    required=True,
    help="python:MODULE:FUNCTION, webhook:URL, celery:TASK, temporal:WORKFLOW, command:LINE or "
    "container:IMAGE (the last two: platform admins only).",
)
@click.option("--title", default="", help="A title for people.")
@click.option(
    "--kind", default=None, help="Type shown in the picker (default: the target's scheme)."
)
@click.option("--payload", default=None, help="Default payload: JSON object or @file.json.")
@click.option("--schema", default=None, help="Payload JSON Schema: JSON object or @file.json.")
@click.option(
    "--timeout", type=int, default=None, help="options.timeout: seconds an item may run (> 0)."
)
@click.option(
    "--max-concurrency",
    type=int,
    default=None,
    help="options.max_concurrency: running items of this job, at most (>= 1).",
)
@click.option(
    "--label", "labels", multiple=True, help="A label KEY=VALUE (repeatable; core.labels' rules)."
)
@json_option
@scope_options
@click.pass_context
def add(
    ctx: click.Context,
    name: str,
    target: str,
    title: str,
    kind: str | None,
    payload: str | None,
    schema: str | None,
    timeout: int | None,
    max_concurrency: int | None,
    labels: tuple[str, ...],
    as_json: bool,
) -> None:
    """Register job NAME in the stack."""
    s = settings(ctx)
    given = {"timeout": timeout, "max_concurrency": max_concurrency}
    options = {key: value for key, value in given.items() if value is not None}
    spec = JobSpec(
        name=name,
        target=target,
        title=title,
        kind=kind,
        payload=parse_json_object(payload, "payload") or {},
        payload_schema=parse_json_object(schema, "schema"),
        options=options,
        labels=parse_pairs(labels),
    )
    render.job(
        client(ctx, writes=True).register_job(s.tenant, s.stack, spec, actor=s.actor), as_json
    )
