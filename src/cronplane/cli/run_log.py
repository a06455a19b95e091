"""`cronplane queue logs ITEM`: an item's attempts with their output, and its events.

Edges only: one read of the service (`RunService.item_logs`, locally or over
`--url`), rendered. Every text is redacted by the record (core.attempts), and
control characters a program printed (terminal escapes among them) are shown
as `\\ufffd`, never sent to the reader's terminal.
"""

from __future__ import annotations

from typing import Any

import click

from cronplane.cli import render
from cronplane.core.attempts import Attempt
from cronplane.core.redact import redact_text
from cronplane.service.run_logs import RunLog

# The output fields printed as blocks of text (the others on one line each).
TEXT_FIELDS = ("stdout", "stderr", "body", "log")


def printable(text: str) -> str:
    """The text with control characters other than newline and tab replaced."""
    return "".join(c if c in "\n\t" or c.isprintable() else "\ufffd" for c in text)


def attempts_line(log: RunLog) -> str:
    """`failed, attempt 2 of 3` as the item stands."""
    item = log.item
    return f"{item.status}, attempt {item.attempts} of {item.max_attempts}"


def _timing(attempt: Attempt) -> str:
    if attempt.started_at is None:
        return f"never started; ended {render.when(attempt.finished_at)}"
    seconds = attempt.seconds or 0.0
    return (
        f"started {render.when(attempt.started_at)}, ended {render.when(attempt.finished_at)}"
        f" ({seconds:.3f} s)"
    )


def _attempt_lines(attempt: Attempt) -> list[str]:
    lines = [
        f"Attempt {attempt.attempt}: {attempt.outcome} (worker {attempt.worker})",
        f"  {_timing(attempt)}",
    ]
    if attempt.error:
        lines.append(f"  error: {printable(redact_text(attempt.error))}")
    fields = attempt.output_fields()
    if not fields:
        lines.append("  (no output)")
    for name, value in fields:
        if name in TEXT_FIELDS and isinstance(value, str):
            lines.append(f"  --- {name} ---")
            lines.extend(f"  {line}" for line in printable(value).splitlines())
        else:
            lines.append(f"  {name}: {printable(str(value))}")
    return lines


def render_run_log(log: RunLog) -> str:
    """The text `queue logs` prints."""
    item = log.item
    lines = [
        f"Item {item.id} {item.stack}/{item.job} ({item.environment}): {attempts_line(log)}",
    ]
    if item.error:
        lines.append(f"Error: {printable(redact_text(item.error))}")
    lines.append("")
    if not log.attempts:
        lines.append("No attempt recorded (not run yet, or run before attempts were kept).")
    for attempt in log.attempts:
        lines += [*_attempt_lines(attempt), ""]
    lines.append("Events:")
    for event in log.events:
        message = printable(redact_text(event.message))
        lines.append(f"  {render.when(event.created_at)}  {event.code}  {message}")
    return "\n".join(lines)


def show(log: RunLog, as_json: bool) -> None:
    """Print the run: its JSON document, or the text."""
    if as_json:
        document: dict[str, Any] = log.to_dict()
        render.echo_json(document)
        return
    click.echo(render_run_log(log))
