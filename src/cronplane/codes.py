"""The code grammar `X<HTTP status><3-digit seq><MNEMONIC>` and the one registry.

Errors start with `X`, normal events with `V`. The status says how an API
answers an error (and, through its class, which exit code the CLI uses); for
events it is informational (`200` = it happened). Every code in the product is
declared exactly once, through :func:`declare`; `docs/codes.md` is generated
from :data:`REGISTRY` (``python -m cronplane.codes``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

CODE_PATTERN = re.compile(
    r"^(?P<prefix>[XV])(?P<status>[1-5]\d\d)(?P<seq>\d{3})(?P<mnemonic>[A-Z]{6})$"
)

Kind = Literal["error", "event"]


@dataclass(frozen=True, slots=True)
class Code:
    """One declared code: its text, its parts and what it means."""

    text: str
    status: int
    seq: int
    mnemonic: str
    kind: Kind
    summary: str

    def __str__(self) -> str:
        return self.text


REGISTRY: dict[str, Code] = {}


def parse_code(text: str) -> tuple[str, int, int, str]:
    """Split a code into (prefix, status, seq, mnemonic); ValueError when malformed."""
    match = CODE_PATTERN.match(text)
    if match is None:
        raise ValueError(
            f"malformed code {text!r}: expected X|V + status + 3-digit seq + 6 letters"
        )
    return match["prefix"], int(match["status"]), int(match["seq"]), match["mnemonic"]


def declare(text: str, summary: str, kind: Kind) -> Code:
    """Declare a code once; a malformed or repeated code is a programming error.

    Errors are raised and answered; events are recorded. An event that records
    a failure (`X200900SCHCAL`) keeps the `X` prefix with a 2xx status.
    """
    prefix, status, seq, mnemonic = parse_code(text)
    if kind == "error" and (prefix != "X" or status < 400):
        raise ValueError(f"error code {text} must be X with a 4xx/5xx status")
    if text in REGISTRY:
        raise ValueError(f"code {text} declared twice")
    for other in REGISTRY.values():
        if other.mnemonic == mnemonic:
            raise ValueError(f"mnemonic {mnemonic} of {text} already used by {other.text}")
    code = Code(text, status, seq, mnemonic, kind, summary)
    REGISTRY[text] = code
    return code


def render_markdown() -> str:
    """The codes table for docs/codes.md, generated from the registry."""
    # Import the declaring modules so the registry is complete.
    import cronplane.errors
    import cronplane.events  # noqa: F401

    lines = [
        "# Codes",
        "",
        "Generated from `cronplane.codes.REGISTRY` by `python -m cronplane.codes > docs/codes.md`;",
        "a test fails when this file is stale. Grammar: `X<HTTP status><3-digit seq><MNEMONIC>`",
        "for errors, `V…` for normal events (events starting with `X` record a failure).",
        "",
        "| code | kind | HTTP status | CLI exit | meaning |",
        "|---|---|---|---|---|",
    ]
    from cronplane.errors import exit_code_of

    for code in sorted(REGISTRY.values(), key=lambda c: (c.kind, c.status, c.seq, c.text)):
        exit_code = str(exit_code_of(code)) if code.kind == "error" else "-"
        status = str(code.status)
        lines.append(f"| `{code.text}` | {code.kind} | {status} | {exit_code} | {code.summary} |")
    lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    # Run as a script this module is `__main__`; render from the imported one,
    # whose registry the declaring modules fill.
    from cronplane import codes

    print(codes.render_markdown(), end="")
