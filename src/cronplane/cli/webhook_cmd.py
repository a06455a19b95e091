"""`cronplane webhook secret|seal`: the signing secrets of webhook jobs.

Both need the deployment key (CRONPLANE_SECRET_KEY) in this shell: whoever
holds it can sign as any webhook job, so these are operator commands.
"""

from __future__ import annotations

import sys

import click

from cronplane.cli import render
from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.errors import InvalidRequest, JobNotFound
from cronplane.targets.webhook import SECRET_KEY_VARIABLE, SecretKeyring, secret_for


def _keyring() -> SecretKeyring:
    try:
        keyring = SecretKeyring.from_environ()
    except ValueError as error:
        raise InvalidRequest(str(error)) from error
    if keyring is None:
        raise InvalidRequest(f"{SECRET_KEY_VARIABLE} is not set in this shell")
    return keyring


@click.group()
@scope_options
def webhook() -> None:
    """Signing secrets of webhook jobs (needs CRONPLANE_SECRET_KEY)."""


@webhook.command("secret")
@click.argument("name")
@json_option
@scope_options
@click.pass_context
def secret(ctx: click.Context, name: str, as_json: bool) -> None:
    """Print the secret webhook job NAME signs with, for its receiver
    (`--json`: `{"job", "stack", "secret"}`)."""
    s = settings(ctx)
    jobs = client(ctx).list_jobs(s.tenant, s.stack)
    job = next((j for j in jobs if j.name == name), None)
    if job is None:
        raise JobNotFound(f"job {name!r} not found in {s.tenant}/{s.stack}", {"job": name})
    if not job.target.startswith("webhook:"):
        raise InvalidRequest(f"job {name!r} is not a webhook job ({job.target})")
    try:
        found = secret_for(_keyring(), job.tenant, job.stack, job.name, job.options)
    except ValueError as error:
        raise InvalidRequest(f"job {name!r}: {error}") from error
    if as_json:
        render.echo_json({"job": job.name, "stack": job.stack, "secret": found})
    else:
        click.echo(found)


@webhook.command("seal")
@json_option
def seal(as_json: bool) -> None:
    """Seal a secret read from standard input, for a job's `secret` option
    (`--json`: `{"sealed"}`)."""
    given = sys.stdin.read().strip()
    if not given:
        raise InvalidRequest("no secret on standard input")
    sealed = _keyring().seal(given)
    if as_json:
        render.echo_json({"sealed": sealed})
    else:
        click.echo(sealed)
