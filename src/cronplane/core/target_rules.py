"""Which target strings a job may name (SPEC §4): one rule per scheme, and the same rules
as one regex for the OpenAPI document. Who may set a `command:` target is not judged
here (`core.access.check_command_job`). Pure."""

from __future__ import annotations

import re
from typing import Final
from urllib.parse import urlsplit

from cronplane.core.validation import storable_text
from cronplane.errors import InvalidTarget

MAX_TARGET_LENGTH: Final = 1024
_PYTHON_TARGET: Final = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*"
)
_CELERY_TARGET: Final = re.compile(r"[A-Za-z0-9_.:-]{1,255}")
# A Temporal workflow type as SDKs name them (`SendInvoices`, `billing.send_invoices`).
_TEMPORAL_TARGET: Final = re.compile(r"[A-Za-z0-9_.:/@-]{1,255}")
# A shell line (a crontab line) or script (a Kubernetes `sh -c` block scalar): starts
# with a visible character; tabs and newlines but no other control character. The
# script is bounded like every target (MAX_TARGET_LENGTH) and gated like every command.
_COMMAND_TARGET: Final = re.compile(r"[^\x00-\x20\x7f][^\x00-\x08\x0b-\x1f\x7f]*")
# An image reference (`registry/name:tag@sha256:…`): never starting with `-`, no space.
_CONTAINER_TARGET: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@-]{0,254}")
# The targets `validate_target` accepts, as one regex for the OpenAPI document
# (webhook URLs narrowed to an ASCII authority without controls or spaces).
TARGET_REGEX: Final = (
    rf"^(?:python:{_PYTHON_TARGET.pattern}"
    r"|webhook:https?://[A-Za-z0-9._~%!$&'()*+,;=:@-]+(?:[/?#][^\x00-\x20\x7f]*)?"
    rf"|celery:{_CELERY_TARGET.pattern}"
    rf"|temporal:{_TEMPORAL_TARGET.pattern}"
    rf"|command:{_COMMAND_TARGET.pattern}"
    rf"|container:{_CONTAINER_TARGET.pattern})$"
)


def validate_target(value: object) -> str:
    """`python:module:function`, `webhook:http(s)://…`, `celery:task.name`,
    `temporal:WorkflowType`, `command:LINE` (a shell line or script) or `container:IMAGE`;
    returns the scheme. Who may set a command or an image is not judged here
    (`core.access.check_command_job`)."""
    if (
        not isinstance(value, str)
        or len(value) > MAX_TARGET_LENGTH
        or ":" not in value
        or not storable_text(value)
    ):
        raise InvalidTarget(
            f"target {ascii(value)[:200]} is invalid: use python:MODULE:FUNCTION, webhook:URL, celery:TASK, temporal:WORKFLOW, command:LINE or container:IMAGE",
            {"field": "target"},
        )
    scheme, _, rest = value.partition(":")
    ok = False
    if scheme == "python":
        ok = _PYTHON_TARGET.fullmatch(rest) is not None
    elif scheme == "webhook":
        try:
            url = urlsplit(rest)
        except ValueError:  # `http://[` (an unclosed IPv6 literal), a netloc NFKC changes
            url = urlsplit("")
        ok = url.scheme in ("http", "https") and bool(url.netloc)
    elif scheme == "celery":
        ok = _CELERY_TARGET.fullmatch(rest) is not None
    elif scheme == "temporal":
        ok = _TEMPORAL_TARGET.fullmatch(rest) is not None
    elif scheme == "command":
        ok = _COMMAND_TARGET.fullmatch(rest) is not None
    elif scheme == "container":
        ok = _CONTAINER_TARGET.fullmatch(rest) is not None
    if not ok:
        raise InvalidTarget(
            f"target {ascii(value)[:200]} is invalid: use python:MODULE:FUNCTION, webhook:URL, celery:TASK, temporal:WORKFLOW, command:LINE or container:IMAGE",
            {"field": "target"},
        )
    return scheme
