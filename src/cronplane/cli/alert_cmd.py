"""`cronplane alert ls|ack`, `alert rule add|ls|rm`, `alert channel add|ls|rm`.

Rules watch a scope of the tenant: `--schedule NAME` or `--job NAME` (in the
--stack/--env), `--scope stack` (the --stack, and --env when given), or the
whole tenant (the default). Channel secrets are given sealed (`cronplane
webhook seal`); no command prints one back. See docs/alerts.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from uuid import UUID

import click
from rich.table import Table

from cronplane.cli import hints, render
from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.core.alert_rules import check_rule
from cronplane.core.alerts import (
    DEFAULT_RENOTIFY,
    SCOPE_PARTS,
    SKIP_REASONS,
    Alert,
    AlertRule,
    Channel,
    Condition,
    RuleSpec,
)
from cronplane.errors import AlertRuleNotFound, InvalidRequest, JobNotFound

CONDITIONS = [c.value for c in Condition]


@click.group()
@scope_options
def alert() -> None:
    """Alerts: what cronplane tells you when a schedule's runs go wrong."""


# -- alerts -------------------------------------------------------------------------


def _alerts(rows: Sequence[Alert], as_json: bool) -> None:
    if as_json:
        render.echo_json([row.to_dict() for row in rows])
        return
    table = Table()
    columns = ("Id", "Status", "Condition", "Schedule", "Rule", "Count", "Opened", "Acked")
    for column in columns:
        table.add_column(column, no_wrap=True)
    table.add_column("Notification")  # each channel's last delivery: a failure says why
    for row in rows:
        table.add_row(
            str(row.id),
            row.status.upper(),
            row.condition,
            f"{row.stack}/{row.environment}/{row.schedule}",
            row.rule,
            str(row.count),
            render.when(row.opened_at),
            row.acked_by or "-",
            delivery_text(row),
        )
    render._console().print(table)


def delivery_text(alert: Alert) -> str:
    """An alert's last notification per channel: `hook sent`, `slack failed: ERROR`."""
    if not alert.deliveries:
        return "-"
    parts = []
    for channel, last in sorted(alert.deliveries.items()):
        error = f": {last['error']}" if last.get("error") else ""
        parts.append(f"{channel} {last.get('state')}{error}")
    return "; ".join(parts)


@alert.command("ls")
@click.option("--all", "everything", is_flag=True, help="Closed alerts too (default: open only).")
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True)
@json_option
@scope_options
@click.pass_context
def ls(ctx: click.Context, everything: bool, limit: int, as_json: bool) -> None:
    """The tenant's alerts, newest first."""
    s = settings(ctx)
    rows = client(ctx).list_alerts(s.tenant, status=None if everything else "open", limit=limit)
    _alerts(rows, as_json)


@alert.command("ack")
@click.argument("alert_id")
@json_option
@scope_options
@click.pass_context
def ack(ctx: click.Context, alert_id: str, as_json: bool) -> None:
    """Acknowledge alert ALERT_ID (it stays open until its condition clears)."""
    try:
        parsed = UUID(alert_id)
    except ValueError as error:
        raise InvalidRequest(f"{alert_id!r} is not an alert id", {"field": "alert_id"}) from error
    s = settings(ctx)
    _alerts([client(ctx, writes=True).ack_alert(s.tenant, parsed, actor=s.actor)], as_json)


# -- rules --------------------------------------------------------------------------


@alert.group("rule")
@scope_options
def rule() -> None:
    """Alert rules: a condition on a scope, told on channels."""


def _rules(rows: Sequence[AlertRule], as_json: bool) -> None:
    if as_json:
        render.echo_json([row.to_dict() for row in rows])
        return
    table = Table()
    for column in ("Name", "Condition", "Threshold", "Scope", "Channels", "Renotify", "Source"):
        table.add_column(column, no_wrap=True)
    for row in rows:
        where = row.selector or "/".join(p for p in (row.stack, row.environment, row.target) if p)
        reasons = f" ({', '.join(row.reasons)})" if row.reasons else ""
        table.add_row(
            row.name,
            row.condition + reasons,
            "-" if row.threshold is None else f"{row.threshold}s",
            f"{row.scope}: {where or '-'}",
            ", ".join(row.channels),
            f"{row.renotify}s",
            row.source,
        )
    render._console().print(table)


@rule.command("add")
@click.argument("name")
@click.option("--condition", required=True, type=click.Choice(CONDITIONS))
@click.option("--schedule", "schedule_name", default=None, help="Watch this schedule.")
@click.option("--job", "job_name", default=None, help="Watch the schedules of this job.")
@click.option(
    "--scope",
    type=click.Choice(["schedule", "job", "stack", "tenant", "selector"]),
    default=None,
    help="Default: schedule/job when named, selector with --selector, else tenant.",
)
@click.option(
    "--selector",
    default=None,
    help="Watch the tenant's schedules whose labels match, when judged "
    "(e.g. 'team=payments,tier!=batch').",
)
@click.option(
    "--threshold",
    type=int,
    default=None,
    help="Seconds (late, long, absent; skipped with --reason paused: paused longer than).",
)
@click.option("--reason", "reasons", multiple=True, type=click.Choice(SKIP_REASONS))
@click.option("--channel", "channels", multiple=True, required=True, help="Channel name.")
@click.option("--renotify", type=int, default=DEFAULT_RENOTIFY, show_default=True)
@json_option
@scope_options
@click.pass_context
def rule_add(
    ctx: click.Context,
    name: str,
    condition: str,
    schedule_name: str | None,
    job_name: str | None,
    scope: str | None,
    threshold: int | None,
    reasons: tuple[str, ...],
    channels: tuple[str, ...],
    renotify: int,
    as_json: bool,
    selector: str | None,
) -> None:
    """Add rule NAME."""
    if schedule_name and job_name:
        raise click.UsageError("give --schedule or --job, not both")
    s = settings(ctx)
    named = "schedule" if schedule_name else "job" if job_name else None
    kind = scope or named or ("selector" if selector is not None else "tenant")
    # Where the rule is placed comes from the settings' stack and environment, as its
    # scope names them (core.alerts.SCOPE_PARTS); a target or selector given is kept for
    # check_rule to judge.
    parts = SCOPE_PARTS.get(kind, frozenset())
    spec = RuleSpec(
        name=name,
        condition=condition,
        scope=kind,
        stack=s.stack if "stack" in parts else None,
        environment=s.environment if "environment" in parts else None,
        target=schedule_name or job_name,
        threshold=threshold,
        reasons=reasons,
        channels=channels,
        renotify=renotify,
        selector=selector,
    )
    plane = client(ctx, writes=True)
    # What the rule watches must exist (the API may name one before it is made); the
    # rule's own refusals (core.alert_rules.check_rule) come first, as the service's would.
    check_rule(spec)
    if schedule_name:
        hints.existing_schedule(plane, s.scope, schedule_name)
    if job_name and job_name not in {job.name for job in plane.list_jobs(s.tenant, s.stack)}:
        raise JobNotFound(f"job {job_name!r} not found in stack {s.stack}", {"job": job_name})
    _rules([plane.add_alert_rule(s.tenant, spec, actor=s.actor)], as_json)


@rule.command("ls")
@json_option
@scope_options
@click.pass_context
def rule_ls(ctx: click.Context, as_json: bool) -> None:
    """The tenant's rules."""
    _rules(client(ctx).list_alert_rules(settings(ctx).tenant), as_json)


@rule.command("rm")
@click.argument("name")
@json_option
@scope_options
@click.pass_context
def rule_rm(ctx: click.Context, name: str, as_json: bool) -> None:
    """Remove rule NAME (its open alerts close without a notification)."""
    s = settings(ctx)
    plane = client(ctx, writes=True)
    try:
        removed = plane.remove_alert_rule(s.tenant, name, actor=s.actor)
    except AlertRuleNotFound as error:
        hints.missing_rule(plane, s.tenant, error)
    _rules([removed], as_json)


# -- channels -----------------------------------------------------------------------


@alert.group("channel")
@scope_options
def channel() -> None:
    """Delivery channels: webhook, Slack, email."""


def _channels(rows: Sequence[Channel], as_json: bool) -> None:
    if as_json:
        render.echo_json([row.to_dict() for row in rows])
        return
    table = Table()
    for column in ("Name", "Kind", "Config", "Secret"):
        table.add_column(column, no_wrap=column != "Config")
    for row in rows:
        config = ", ".join(f"{k}={v}" for k, v in sorted(row.config.items()))
        table.add_row(row.name, row.kind, config or "-", "set" if row.secret else "-")
    render._console().print(table)


@channel.command("add")
@click.argument("name")
@click.option("--kind", required=True, type=click.Choice(["webhook", "slack", "email"]))
@click.option("--endpoint", "url", default=None, help="webhook: the URL to POST to.")
@click.option(
    "--secret",
    default=None,
    help="Sealed (cronplane webhook seal): the webhook's signing secret, the Slack "
    "incoming-webhook URL, or the SMTP password.",
)
@click.option("--console-url", default=None, help="slack: the console's address for the link.")
@click.option("--host", default=None, help="email: SMTP host.")
@click.option("--port", type=int, default=None, help="email: SMTP port (default 25).")
@click.option("--starttls", is_flag=True, help="email: upgrade with STARTTLS.")
@click.option(
    "--ca-file",
    default=None,
    help="email (with --starttls): PEM file of the CAs to trust, on the workers' disk.",
)
@click.option("--username", default=None, help="email: SMTP login (password: --secret).")
@click.option("--sender", default=None, help="email: From address.")
@click.option("--to", "recipients", multiple=True, help="email: a recipient (repeatable).")
@json_option
@scope_options
@click.pass_context
def channel_add(
    ctx: click.Context,
    name: str,
    kind: str,
    url: str | None,
    secret: str | None,
    console_url: str | None,
    host: str | None,
    port: int | None,
    starttls: bool,
    ca_file: str | None,
    username: str | None,
    sender: str | None,
    recipients: tuple[str, ...],
    as_json: bool,
) -> None:
    """Add channel NAME."""
    given: dict[str, Any] = {
        "url": url,
        "console_url": console_url,
        "host": host,
        "port": port,
        "starttls": starttls or None,
        "ca_file": ca_file,
        "username": username,
        "sender": sender,
        "to": list(recipients) or None,
    }
    config = {k: v for k, v in given.items() if v is not None}
    s = settings(ctx)
    made = client(ctx, writes=True).add_alert_channel(
        s.tenant, name, kind, config, secret=secret, actor=s.actor
    )
    _channels([made], as_json)


@channel.command("ls")
@json_option
@scope_options
@click.pass_context
def channel_ls(ctx: click.Context, as_json: bool) -> None:
    """The tenant's channels (secrets only as "set")."""
    _channels(client(ctx).list_alert_channels(settings(ctx).tenant), as_json)


@channel.command("rm")
@click.argument("name")
@json_option
@scope_options
@click.pass_context
def channel_rm(ctx: click.Context, name: str, as_json: bool) -> None:
    """Remove channel NAME (refused while a rule names it)."""
    s = settings(ctx)
    _channels(
        [client(ctx, writes=True).remove_alert_channel(s.tenant, name, actor=s.actor)], as_json
    )
