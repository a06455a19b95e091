"""Paging through listings: the page bound and the opaque keyset cursor.

A schedule listing is ordered by (name, stack, environment); the cursor is that
key of the last row shown, base64 text the client sends back as it is.
"""

from __future__ import annotations

import base64
import binascii
import json

from cronplane.core.model import Schedule
from cronplane.core.queries import MAX_PAGE
from cronplane.errors import InvalidRequest


def check_limit(limit: int) -> None:
    """InvalidRequest when a page size is outside 1..MAX_PAGE."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidRequest(f"limit {limit} is out of range 1..{MAX_PAGE}", {"field": "limit"})


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
