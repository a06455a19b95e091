"""`cronplane import celery-beat MODULE:APP`: write an app.yaml from a Celery beat schedule."""

from __future__ import annotations

import json
from pathlib import Path

import click

from cronplane.celery_beat import load_celery_app, translate_app
from cronplane.manifest import manifest_from_data


@click.group("import")
def import_() -> None:
    """Bring schedules in from other schedulers."""


@import_.command("celery-beat")
@click.argument("reference", metavar="MODULE:APP")
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the manifest here (default: standard output).",
)
@click.option("--stack", default=None, help="The manifest's name (default: the Celery app's).")
@click.option("--strict", is_flag=True, help="Exit 1 when any beat entry was not translated.")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print {manifest, written, skipped, notes} as JSON (the file, if any, stays YAML).",
)
def celery_beat(
    reference: str, output: Path | None, stack: str | None, strict: bool, as_json: bool
) -> None:
    """Translate MODULE:APP's beat_schedule into an app.yaml (celery: targets).

    Entries that cannot be translated (solar, fractional seconds, …) are listed
    in the file's header and on standard error, never dropped silently.
    """
    translation = translate_app(load_celery_app(reference), stack)
    # The same loader `cronplane app install` runs: what we write, it accepts.
    manifest_from_data(translation.document, source=f"celery-beat import of {reference}")
    text = translation.to_yaml(reference)
    if as_json:
        if output is not None:
            output.write_text(text)
        skipped = [{"name": item.name, "reason": item.reason} for item in translation.skipped]
        document = {
            "manifest": translation.document,
            "written": None if output is None else str(output),
            "skipped": skipped,
            "notes": list(translation.notes),
        }
        click.echo(json.dumps(document, indent=2, default=str, ensure_ascii=False))
        if strict and translation.skipped:
            raise click.exceptions.Exit(1)
        return
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)
        crons = len(translation.document["crons"])
        click.echo(
            f"wrote {output}: {len(translation.document['jobs'])} jobs, {crons} crons", err=True
        )
    for item in translation.skipped:
        click.echo(f"not translated: {item.name}: {item.reason}", err=True)
    for note in translation.notes:
        click.echo(f"note: {note}", err=True)
    if strict and translation.skipped:
        raise click.exceptions.Exit(1)
