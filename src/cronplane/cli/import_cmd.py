"""`cronplane import SOURCE …`: write an app.yaml from another scheduler's schedule.

Every importer shares the options and the output: `-o FILE` (default: standard
output), `--stack NAME`, `--strict` (exit 2 when anything was not translated)
and `--json`; the entries left out are listed in the file's header and on
standard error, never dropped silently. One entry never aborts an import: an
entry `app install` would refuse (the loader, the five-year rule) is listed too,
so what is written always installs.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from cronplane.clock import SystemClock
from cronplane.importers.translation import Translation, usable
from cronplane.manifest import manifest_from_data

# `--strict` with entries left out: the class of an invalid input (cli.main's exit 2).
STRICT_EXIT = 2

F = TypeVar("F", bound=Callable[..., Any])


@click.group("import")
def import_() -> None:
    """Bring schedules in from other schedulers."""


def _common(default_stack: str) -> Callable[[F], F]:
    """The options every importer takes."""

    def decorate(command: F) -> F:
        for option in reversed(
            [
                click.option(
                    "--output",
                    "-o",
                    type=click.Path(dir_okay=False, path_type=Path),
                    default=None,
                    help="Write the manifest here (default: standard output).",
                ),
                click.option(
                    "--stack", default=None, help=f"The manifest's name (default: {default_stack})."
                ),
                click.option(
                    "--strict", is_flag=True, help="Exit 2 when any entry was not translated."
                ),
                click.option(
                    "--json",
                    "as_json",
                    is_flag=True,
                    help="Print {manifest, written, skipped, notes} as JSON (the file stays YAML).",
                ),
            ]
        ):
            command = option(command)
        return command

    return decorate


def emit(
    translation: Translation, source: str, output: Path | None, strict: bool, as_json: bool
) -> None:
    """Check, write and report a translation; exit 2 under --strict when entries were left."""
    # What `app install` would refuse is listed, not written: the rest still installs.
    translation = usable(translation, SystemClock().now())
    # The same loader `cronplane app install` runs: what we write, it accepts.
    manifest_from_data(translation.document, source=f"{translation.command} import of {source}")
    text = translation.to_yaml(source)
    if output is not None:
        output.write_text(text)
    if as_json:
        document = {
            "manifest": translation.document,
            "written": None if output is None else str(output),
            **translation.report(),
        }
        click.echo(json.dumps(document, indent=2, default=str, ensure_ascii=False))
    else:
        if output is None:
            click.echo(text, nl=False)
        else:
            jobs, crons = len(translation.document["jobs"]), len(translation.document["crons"])
            click.echo(f"wrote {output}: {jobs} jobs, {crons} crons", err=True)
        for item in translation.skipped:
            click.echo(f"not translated: {item.name}: {item.reason}", err=True)
        for note in translation.notes:
            click.echo(f"note: {note}", err=True)
    if strict and translation.skipped:
        raise click.exceptions.Exit(STRICT_EXIT)


@import_.command("celery-beat")
@click.argument("reference", metavar="MODULE:APP")
@_common("the Celery app's name")
def celery_beat(
    reference: str, output: Path | None, stack: str | None, strict: bool, as_json: bool
) -> None:
    """Translate MODULE:APP's beat_schedule into an app.yaml (celery: targets).

    Entries that cannot be translated (solar, fractional seconds, …) are listed
    in the file's header and on standard error, never dropped silently.
    """
    from cronplane.importers.celery_beat import load_celery_app, translate_app

    emit(translate_app(load_celery_app(reference), stack), reference, output, strict, as_json)


@import_.command("crontab")
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--system/--user",
    "system",
    default=None,
    help="The file has a user column (/etc/crontab, /etc/cron.d); default: guessed from its path.",
)
@click.option(
    "--timezone",
    default="UTC",
    show_default=True,
    help="The zone the cron daemon ran in: entries without CRON_TZ are read in it.",
)
@_common("the file's name")
def crontab(
    path: Path,
    system: bool | None,
    timezone: str,
    output: Path | None,
    stack: str | None,
    strict: bool,
    as_json: bool,
) -> None:
    """Translate a crontab into an app.yaml (one command: job and one cron per line).

    `@reboot` and non-standard `@every` lines are listed as not translated;
    CRON_TZ sets the zone, SHELL and other variables go with the commands,
    MAILTO is reported (a command's output is kept in its run's result).
    """
    from cronplane.importers.crontab import (
        is_system_crontab,
        looks_like_system,
        read_text,
        translate,
    )

    text = read_text(path)
    guessed = None
    if system is None:
        accounts = None if is_system_crontab(path) else looks_like_system(text)
        system = is_system_crontab(path) or accounts is not None
        if accounts is not None:
            guessed = (
                f"the sixth field ({', '.join(accounts[:5])}) was read as a user column, as in "
                "/etc/crontab and /etc/cron.d: --user reads the file as a user crontab instead"
            )
    name = stack or path.name
    translation = translate(text, stack=name, system=system, timezone=timezone)
    if guessed is not None:
        translation.notes.insert(0, guessed)
    emit(translation, str(path), output, strict, as_json)


@import_.command("kubernetes")
@click.argument("path", metavar="FILE|DIR", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--timezone",
    default="UTC",
    show_default=True,
    help="The controller's zone: CronJobs without spec.timeZone are read in it.",
)
@click.option(
    "--as",
    "as_kind",
    # importers.kubernetes_pod.KINDS (not imported here: commands load what they run)
    type=click.Choice(["container", "command"]),
    default="container",
    show_default=True,
    help="container: each CronJob runs its image (podman or docker on a worker); "
    "command: its command runs on a worker's host.",
)
@_common("the directory's or file's name; a file of one CronJob: its name")
def kubernetes(
    path: Path,
    timezone: str,
    as_kind: str,
    output: Path | None,
    stack: str | None,
    strict: bool,
    as_json: bool,
) -> None:
    """Translate CronJob manifests (batch/v1; a file or a directory) into an app.yaml.

    Each CronJob's container becomes a container: target that runs its image
    (--as command: a command: target on a worker's host, the image recorded for
    you to map); @every schedules and pods of several containers are listed as
    not translated.
    """
    from cronplane.importers.kubernetes import read_documents, stack_name, translate

    documents, unreadable = read_documents(path)
    name = stack or stack_name(path, documents)
    translation = translate(
        documents, stack=name, timezone=timezone, unreadable=unreadable, as_kind=as_kind
    )
    if stack is None:
        translation.notes.append(
            f"the manifest is named {translation.document['name']!r} (the stack it installs "
            "as): --stack names it, so two imports do not replace each other's crons"
        )
    emit(translation, str(path), output, strict, as_json)


@import_.command("temporal")
@click.argument(
    "path", metavar="[FILE]", required=False, type=click.Path(dir_okay=False, path_type=Path)
)
@click.option(
    "--address",
    default=None,
    help="Ask this Temporal server (host:port) for its schedules instead of reading FILE.",
)
@click.option(
    "--namespace",
    default="default",
    show_default=True,
    help="The schedules' namespace (asked with --address; written into each job).",
)
@click.option(
    "--schedule-id",
    "ids",
    multiple=True,
    help="With --address: only these schedules (repeatable; default: all of the namespace).",
)
@click.option(
    "--task-queue",
    default=None,
    help="The task queue for schedules whose JSON does not name one (`schedule list` output).",
)
@_common("temporal")
def temporal(
    path: Path | None,
    address: str | None,
    namespace: str,
    ids: tuple[str, ...],
    task_queue: str | None,
    output: Path | None,
    stack: str | None,
    strict: bool,
    as_json: bool,
) -> None:
    """Translate Temporal schedules into an app.yaml (temporal: targets).

    FILE holds the JSON of `temporal schedule describe -s ID -o json` (one, or several
    one after another) or of `temporal schedule list -o json`; --address asks a server
    through the Temporal SDK instead. What has no equivalent is listed or noted.
    """
    from cronplane.errors import InvalidRequest
    from cronplane.importers.temporal import read_file, read_server, translate

    if (path is None) == (address is None):
        raise InvalidRequest("give FILE or --address (one of them)", {"field": "source"})
    if address is not None:
        schedules, source = read_server(address, namespace, ids), f"--address {address}"
    else:
        assert path is not None
        schedules, source = read_file(path), str(path)
    translation = translate(
        schedules, stack=stack or "temporal", namespace=namespace, task_queue=task_queue
    )
    emit(translation, source, output, strict, as_json)


@import_.command("django-celery-beat")
@click.argument("url", metavar="DATABASE_URL")
@_common("the database's name")
def django_celery_beat(
    url: str, output: Path | None, stack: str | None, strict: bool, as_json: bool
) -> None:
    """Translate django-celery-beat's periodic tasks (read from its tables, read-only,
    without Django) into an app.yaml with celery: targets.

    DATABASE_URL as Django settings give it (postgres://…, sqlite:///path, mysql://…
    with a driver installed) or a SQLite file's path. Solar schedules and rows
    that cannot be translated are listed, never dropped silently.
    """
    from cronplane.importers.django_celery_beat import database_name, read_tasks, translate

    now = SystemClock().now()
    translation = translate(read_tasks(url), stack=stack or database_name(url), now=now)
    emit(translation, parsed_source(url), output, strict, as_json)


def parsed_source(url: str) -> str:
    """The URL as the file's header may show it (password masked)."""
    from cronplane.importers.django_celery_beat import parsed_name

    return parsed_name(url) if "://" in url else url
