"""Paging through listings: the opaque keyset cursor (the page bound is core.queries').

A schedule listing is ordered by (name, stack, environment); the cursor is that
key of the last row shown, base64 text the client sends back as it is.
"""

from __future__ import annotations

import base64
import binascii
import json

from cronplane.core.model import Schedule
from cronplane.errors import InvalidRequest


def encode_cursor(schedule: Schedule) -> str:
    """An opaque keyset cursor for the row after which the next page starts."""
    raw = json.dumps([schedule.name, schedule.stack, schedule.environment]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str, str]:
    """The keyset of a cursor; InvalidRequest when it was not made by encode_cursor."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        name, stack, environment = json.loads(raw)
        if not all(isinstance(part, str) for part in (name, stack, environment)):
            raise ValueError(cursor)
    except (ValueError, binascii.Error, TypeError) as error:
        raise InvalidRequest(f"cursor {cursor[:40]!r} is invalid", {"field": "cursor"}) from error
    return name, stack, environment
