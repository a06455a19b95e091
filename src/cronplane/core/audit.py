"""An audit export's query and records (issue 38): values only, no I/O, no clock.

An export reads a tenant's events *forward*, oldest first, in id order, so it
can stop and resume: each record's `id` is its cursor, and `after=ID` answers
exactly the records after it (service.audit says why none is skipped). The
window is `since <= at < until` (`at`: when the event was recorded); `kinds`
keeps the codes filed under those kinds (`cronplane.events.AUDIT_KINDS`).

A bound is an ISO 8601 instant (naive: UTC; a date alone: its midnight UTC) or a
duration ago (`90m`, `24h`, `7d`, `2w`, judged against the caller's "now").
Every refusal is InvalidAuditQuery, naming the field, on every surface.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final
from uuid import UUID

from cronplane.core.codec import field_names
from cronplane.core.controls import parse_instant
from cronplane.core.queries import MAX_PAGE
from cronplane.errors import InvalidAuditQuery

KINDS: Final = ("changes", "runs", "alerts", "system")
ALL: Final = "all"
FORMATS: Final = ("jsonl", "csv")
MAX_CURSOR: Final = 2**62
_AGO: Final = re.compile(r"^(?P<count>\d{1,6})(?P<unit>[smhdw])$")
_UNITS: Final = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One event as an export ships it; `id` is the cursor to resume after it.

    `job` is the job its item ran (the item's own, while the item is kept) or the
    job a job event names; `message` and `detail` have credentials in URLs masked."""

    id: int
    at: datetime
    kind: str
    code: str
    actor: str
    tenant: str
    stack: str | None
    environment: str | None
    schedule_id: UUID | None
    schedule_name: str | None
    job: str | None
    item_id: UUID | None
    scheduled_for: datetime | None
    message: str
    detail: dict[str, Any] = field(default_factory=dict)


# The CSV header, fixed: the record's fields in order (detail as JSON text).
CSV_FIELDS: Final = field_names(AuditRecord)


@dataclass(frozen=True, slots=True)
class AuditPage:
    """Records oldest first; ask again with `after=next` for more (None: nothing more
    is ready now; resume later after the last record's id)."""

    records: tuple[AuditRecord, ...]
    next: int | None


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """A checked export request: the window, the cursor, the codes, the page size."""

    since: datetime | None
    until: datetime | None
    after: int | None
    codes: frozenset[str] | None  # None: every code (kind `all`)
    limit: int


def parse_when(text: str, now: datetime, what: str) -> datetime:
    """An export bound as aware UTC: an ISO 8601 instant or a duration before `now`."""
    try:
        ago = _AGO.match(text.strip())
        if ago is not None:
            return now - timedelta(**{_UNITS[ago["unit"]]: int(ago["count"])})
        return parse_instant(text, "UTC", what)
    except (ValueError, OverflowError) as error:
        raise InvalidAuditQuery(
            f"{what} {text!r} is not an ISO 8601 instant or a duration like 24h or 7d",
            {"field": what},
        ) from error


def widened(at: datetime, by: timedelta) -> datetime | None:
    """`at + by`, or None past the calendar's ends (then the bound is not searched)."""
    try:
        return at + by
    except OverflowError:
        return None


def check_kind(kind: str, kinds_of: dict[str, str]) -> frozenset[str] | None:
    """The codes `kind` keeps (None: all of them), from a code -> kind map."""
    if kind == ALL:
        return None
    if kind not in KINDS:
        raise InvalidAuditQuery(
            f"kind {kind!r} is not one of {', '.join((*KINDS, ALL))}", {"field": "kind"}
        )
    return frozenset(code for code, of in kinds_of.items() if of == kind)


def check_format(name: str) -> str:
    """An export format: `jsonl` or `csv`."""
    if name not in FORMATS:
        raise InvalidAuditQuery(
            f"format {name!r} is not one of {', '.join(FORMATS)}", {"field": "format"}
        )
    return name


def audit_query(
    *,
    since: str | None,
    until: str | None,
    after: int | None,
    kind: str,
    limit: int,
    now: datetime,
    kinds_of: dict[str, str],
) -> AuditQuery:
    """The checked query, or InvalidAuditQuery naming the field it refuses."""
    if not 1 <= limit <= MAX_PAGE:
        raise InvalidAuditQuery(f"limit {limit} is out of range 1..{MAX_PAGE}", {"field": "limit"})
    if after is not None and not 0 <= after <= MAX_CURSOR:
        raise InvalidAuditQuery(f"after {after} is not a cursor (an event id)", {"field": "after"})
    first = None if since is None else parse_when(since, now, "since")
    last = None if until is None else parse_when(until, now, "until")
    if first is not None and last is not None and last <= first:
        raise InvalidAuditQuery(
            f"until {last.isoformat()} is not after since {first.isoformat()}",
            {"field": "until"},
        )
    return AuditQuery(first, last, after, check_kind(kind, kinds_of), limit)
