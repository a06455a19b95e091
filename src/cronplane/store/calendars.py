"""The calendars table: a tenant's business calendars (core.calendars), and who excludes them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from typing import Any
from uuid import uuid4

from sqlalchemy import Connection, Text, cast, select

from cronplane.core.calendars import WEEKDAYS, Calendar
from cronplane.store.tables import calendars, schedules


def _calendar(row: Any) -> Calendar:
    return Calendar(
        row.name,
        frozenset(WEEKDAYS.index(day) for day in row.weekly),
        frozenset(date.fromisoformat(day) for day in row.dates),
        row.holidays,
    )


def _document(row: Any) -> dict[str, Any]:
    """A stored calendar as the API and the CLI show it (JSON-ready: the local and the
    remote CLI print the same)."""
    return {
        "tenant": row.tenant,
        **_calendar(row).to_document(),
        "description": row.description,
        "revision": row.revision,
        "created_at": row.created_at.isoformat(),
        "updated_at": row.updated_at.isoformat(),
        "updated_by": row.updated_by,
    }


def list_calendars(conn: Connection, tenant: str) -> list[dict[str, Any]]:
    """A tenant's calendars by name, as documents."""
    query = select(calendars).where(calendars.c.tenant == tenant).order_by(calendars.c.name)
    return [_document(row) for row in conn.execute(query)]


def get_calendar(conn: Connection, tenant: str, name: str) -> dict[str, Any] | None:
    """One calendar's document, or None."""
    row = conn.execute(
        select(calendars).where(calendars.c.tenant == tenant, calendars.c.name == name)
    ).first()
    return None if row is None else _document(row)


def calendars_named(conn: Connection, tenant: str, names: Iterable[str]) -> dict[str, Calendar]:
    """The tenant's calendars among `names` (those that exist), by name."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    query = select(calendars).where(calendars.c.tenant == tenant, calendars.c.name.in_(wanted))
    return {row.name: _calendar(row) for row in conn.execute(query)}


def tenant_calendars(conn: Connection, tenant: str) -> dict[str, Calendar]:
    """All the tenant's calendars, by name (a sync judges its rows against them)."""
    query = select(calendars).where(calendars.c.tenant == tenant)
    return {row.name: _calendar(row) for row in conn.execute(query)}


def save_calendar(
    conn: Connection,
    tenant: str,
    calendar: Calendar,
    *,
    description: str | None,
    now: datetime,
    actor: str,
) -> dict[str, Any]:
    """Insert the calendar, or replace the one of that name (revision + 1); its document."""
    values = {
        "weekly": [WEEKDAYS[d] for d in sorted(calendar.weekly)],
        "dates": [d.isoformat() for d in sorted(calendar.dates)],
        "holidays": calendar.holidays,
        "description": description,
        "updated_at": now,
        "updated_by": actor,
    }
    key = (calendars.c.tenant == tenant, calendars.c.name == calendar.name)
    updated = conn.execute(
        calendars.update().where(*key).values(**values, revision=calendars.c.revision + 1)
    )
    if updated.rowcount == 0:
        conn.execute(
            calendars.insert().values(
                id=uuid4(), tenant=tenant, name=calendar.name, revision=1, created_at=now, **values
            )
        )
    found = get_calendar(conn, tenant, calendar.name)
    assert found is not None
    return found


def delete_calendar(conn: Connection, tenant: str, name: str) -> None:
    """Remove one calendar (the caller checked that no schedule excludes it)."""
    conn.execute(calendars.delete().where(calendars.c.tenant == tenant, calendars.c.name == name))


def excluding(conn: Connection, tenant: str, name: str | None = None) -> list[Any]:
    """The tenant's schedule rows whose `exclude` names the calendar (None: any):
    (id, stack, environment, name, exclude). Read whole and filtered here: `exclude` is
    a short JSON list on both databases, and a calendar change is rare."""
    query = select(
        schedules.c.id,
        schedules.c.stack,
        schedules.c.environment,
        schedules.c.name,
        schedules.c.exclude,
    ).where(schedules.c.tenant == tenant, cast(schedules.c.exclude, Text) != "[]")
    return [row for row in conn.execute(query) if name is None or name in (row.exclude or ())]
