"""`cronplane audit export`: a tenant's events, oldest first, for a compliance store.

Every page is written as it arrives (one page held at a time): JSON Lines, one
record a line, or CSV with the fixed header `core.audit.CSV_FIELDS` (`detail`
as JSON text, an absent value empty). The first page is asked for before
anything is opened, so input the service refuses (a bad `--since`, an unknown
`--kind`) writes nothing, as does an unknown `--format`. The last record's id
is said on stderr (`--json`: `{"records": N, "last": ID}`): `--after` it resumes
the export with exactly what came after.
"""

from __future__ import annotations

import contextlib
import csv
import json
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any

import click

from cronplane.cli.options import client, json_option, scope_options, settings
from cronplane.core.audit import ALL, CSV_FIELDS, FORMATS, KINDS, AuditPage, check_format
from cronplane.core.codec import to_document
from cronplane.errors import InvalidAuditQuery, InvalidRequest
from cronplane.processes.node import clock_for

PAGE = 1000
Write = Callable[[dict[str, Any]], None]


@click.group()
@scope_options
def audit() -> None:
    """The audit log: every change with its actor and every run's outcome."""


@audit.command("export")
@click.option(
    "--since",
    default=None,
    metavar="WHEN",
    help="From this instant (ISO 8601, naive = UTC) or duration ago (24h, 7d).",
)
@click.option("--until", default=None, metavar="WHEN", help="Up to this one, exclusive.")
@click.option("--kind", default=ALL, metavar="KIND", help=f"{', '.join(KINDS)} or {ALL} (default).")
@click.option("--format", "fmt", default="jsonl", metavar="FORMAT", help=" or ".join(FORMATS) + ".")
@click.option("--after", default=None, metavar="CURSOR", help="Resume after this record id.")
@click.option(
    "--output",
    "-o",
    default=None,
    metavar="FILE",
    help="Write here (default stdout).",
)
@json_option
@scope_options
@click.pass_context
def export(
    ctx: click.Context,
    since: str | None,
    until: str | None,
    kind: str,
    fmt: str,
    after: str | None,
    output: str | None,
    as_json: bool,
) -> None:
    """Export the tenant's events recorded since WHEN, oldest first, every page."""
    check_format(fmt)
    cursor = _cursor(after)
    if since is None and cursor is None:
        raise InvalidAuditQuery(
            "give --since WHEN (or --after CURSOR to resume an export)", {"field": "since"}
        )
    tenant = settings(ctx).tenant
    service = client(ctx, clock_for)  # the writers' clock: a page stops at young events

    def page(after: int | None) -> AuditPage:
        return service.export_audit(
            tenant, since=since, until=until, after=after, kind=kind, limit=PAGE
        )

    found = page(cursor)  # refused input raises here, before anything is written
    written, last = 0, cursor
    with _opened(output) as stream:
        write = _writer(stream, fmt)
        while True:
            for record in found.records:
                write(to_document(record))
            stream.flush()
            written += len(found.records)
            last = found.records[-1].id if found.records else last
            if found.next is None:
                break
            found = page(found.next)
    if as_json:  # the records are on stdout (or in FILE): the summary goes to stderr
        click.echo(json.dumps({"records": written, "last": last}), err=True)
        return
    resume = "" if last is None else f"; resume with --after {last}"
    click.echo(f"exported {written} records{resume}", err=True)


def _cursor(text: str | None) -> int | None:
    if text is None:
        return None
    if not text.strip().isdigit():
        raise InvalidAuditQuery(
            f"after {text!r} is not a cursor (a record's id)", {"field": "after"}
        )
    return int(text)


@contextlib.contextmanager
def _opened(path: str | None) -> Iterator[IO[str]]:
    if path is None or path == "-":
        yield sys.stdout
        return
    try:
        with open(path, "w", encoding="utf-8", newline="") as stream:
            yield stream
    except OSError as error:  # opening it, or a write (a full disk)
        raise InvalidRequest(f"cannot write {path!r}: {error.strerror}") from error


def _writer(stream: IO[str], fmt: str) -> Write:
    """A function that writes one record's document in `fmt` (the CSV header first)."""
    if fmt == "jsonl":

        def line(document: dict[str, Any]) -> None:
            stream.write(json.dumps(document, ensure_ascii=False) + "\n")

        return line
    rows = csv.writer(stream)
    rows.writerow(CSV_FIELDS)

    def row(document: dict[str, Any]) -> None:
        document = {**document, "detail": json.dumps(document["detail"], ensure_ascii=False)}
        rows.writerow(["" if document[name] is None else document[name] for name in CSV_FIELDS])

    return row
