"""Business calendars: a tenant's named calendars, and a schedule's excluded days.

A calendar is saved whole (create or replace, revision + 1) and removed only
while no schedule excludes it. A change takes effect from the next decision:
the rows that move their excluded occurrences (`previous`/`next`) get their
next run recomputed in the change's transaction, and the change is an event
(V200361CALSAV) in the tenant's ledger.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy import Connection

from cronplane import events as ev
from cronplane.core import controls, validation
from cronplane.core.calendars import Calendar, calendar_from
from cronplane.core.excluded import Exclusion, exclusion_of
from cronplane.core.model import Schedule
from cronplane.core.occurrences import row_next_run
from cronplane.errors import CalendarNotFound, InvalidRequest, InvalidState, StaleRevision
from cronplane.service.base import ServiceBase
from cronplane.store import calendars as calendar_store
from cronplane.store import schedules as schedule_store
from cronplane.store.events import append_event


def row_exclusion(
    conn: Connection, tenant: str, exclude: Iterable[str], on_excluded: str, timezone: str
) -> Exclusion | None:
    """The excluded days of a row with these fields (None: it excludes none);
    InvalidRequest naming a calendar the tenant does not have."""
    names = list(exclude)
    if not names:
        return None
    found = calendar_store.calendars_named(conn, tenant, names)
    return exclusion_of(names, on_excluded, timezone, found)


class Exclusions:
    """Rows' excluded days read through one connection, each tenant's calendars once
    (an alert pass asks for many rows; a calendar change for every row it moves)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self._tenants: dict[str, dict[str, Calendar]] = {}

    def of(self, row: Any) -> Exclusion | None:
        """The row's Exclusion (it has `tenant`, `exclude`, `on_excluded`, `timezone`)."""
        if not row.exclude:
            return None
        calendars = self._tenants.get(row.tenant)
        if calendars is None:
            calendars = self._tenants[row.tenant] = calendar_store.tenant_calendars(
                self.conn, row.tenant
            )
        return exclusion_of(row.exclude, row.on_excluded, row.timezone, calendars)


class CalendarSource(Protocol):
    """What answers a calendar by name: the local service or the remote client."""

    def get_calendar(self, tenant: str, name: str) -> dict[str, Any]: ...


def shown_exclusion(source: CalendarSource, row: Schedule) -> Exclusion | None:
    """A stored row's excluded days for its preview (`schedule info`, the API's), read
    through `source`, so the local and the remote CLI show the same."""
    if not row.exclude:
        return None
    found = {}
    for name in row.exclude:
        document = source.get_calendar(row.tenant, name)
        found[name] = calendar_from(
            name, document["weekly"], document["dates"], document["holidays"]
        )
    return exclusion_of(row.exclude, row.on_excluded, row.timezone, found)


def resumed(row: Schedule, after: datetime, exclusion: Exclusion | None) -> datetime | None:
    """The row's next run after `after` (its jitter offset added), within its window,
    run limit and excluded days; None when disabled or when nothing is left."""
    if not row.enabled:
        return None
    return controls.fire_at(row_next_run(row, after, exclusion), row.jitter_offset)


class Calendars(ServiceBase):
    """A tenant's business calendars (core.calendars); one transaction per use case."""

    def list_calendars(self, tenant: str) -> list[dict[str, Any]]:
        """The tenant's calendars by name."""
        validation.validate_name(tenant, "tenant")
        with self._read() as conn:
            return calendar_store.list_calendars(conn, tenant)

    def calendar_users(self, tenant: str) -> dict[str, list[str]]:
        """Each calendar's excluding schedules (`stack/environment/name`), from one read
        (the console's Calendars page)."""
        users: dict[str, list[str]] = {}
        with self._read() as conn:
            for row in calendar_store.excluding(conn, tenant):
                for name in row.exclude:
                    users.setdefault(name, []).append(_key(row))
        return users

    def get_calendar(self, tenant: str, name: str) -> dict[str, Any]:
        """One calendar, with the schedules that exclude it; CalendarNotFound."""
        with self._read() as conn:
            found = calendar_store.get_calendar(conn, tenant, name)
            if found is None:
                raise CalendarNotFound(f"calendar {name!r} not found", {"name": name})
            users = calendar_store.excluding(conn, tenant, name)
        return {**found, "schedules": [_key(row) for row in users]}

    def save_calendar(
        self,
        tenant: str,
        name: str,
        *,
        weekly: Iterable[str] = (),
        dates: Iterable[str] = (),
        holidays: str | None = None,
        description: str | None = None,
        revision: int | None = None,
        actor: str,
    ) -> dict[str, Any]:
        """Create the calendar, or replace the one of that name (`revision`: the one read;
        StaleRevision when it moved on). The rows that move their excluded occurrences
        get their next run recomputed."""
        validation.validate_name(tenant, "tenant")
        calendar = calendar_from(name, weekly, dates, holidays)
        if description is not None and (
            len(description) > 500 or not validation.storable_text(description)
        ):
            raise InvalidRequest(
                "description must be at most 500 storable characters", {"field": "description"}
            )
        with self._write() as tx:
            current = calendar_store.get_calendar(tx.conn, tenant, name)
            if revision is not None and (current is None or current["revision"] != revision):
                raise StaleRevision(f"calendar {name!r} changed since it was read; read it again")
            saved = calendar_store.save_calendar(
                tx.conn, tenant, calendar, description=description, now=tx.now, actor=actor
            )
            moved = self._recompute(tx.conn, tenant, name, tx.now)
            append_event(
                tx.conn,
                ev.CALENDAR_SAVED,
                tenant=tenant,
                actor=actor,
                now=tx.now,
                message=f"calendar {name} {'changed' if current else 'created'} by {actor}",
                detail={**calendar.to_document(), "revision": saved["revision"], "moved": moved},
            )
            if moved:
                tx.schedules_changed()
        return saved

    def remove_calendar(self, tenant: str, name: str, *, actor: str) -> dict[str, Any]:
        """Remove a calendar; refused (X409905STATEX) while a schedule excludes it."""
        with self._write() as tx:
            found = calendar_store.get_calendar(tx.conn, tenant, name)
            if found is None:
                raise CalendarNotFound(f"calendar {name!r} not found", {"name": name})
            users = calendar_store.excluding(tx.conn, tenant, name)
            if users:
                first = _key(users[0])
                raise InvalidState(
                    f"calendar {name!r} is excluded by schedule {first!r}"
                    + (f" and {len(users) - 1} more" if len(users) > 1 else "")
                    + ": change them first",
                    {"name": name, "schedules": [_key(row) for row in users[:100]]},
                )
            calendar_store.delete_calendar(tx.conn, tenant, name)
            append_event(
                tx.conn,
                ev.CALENDAR_REMOVED,
                tenant=tenant,
                actor=actor,
                now=tx.now,
                message=f"calendar {name} removed by {actor}",
                detail={"calendar": name},
            )
        return found

    def _recompute(self, conn: Connection, tenant: str, name: str, now: datetime) -> int:
        """Recompute the next run of the rows that move their excluded occurrences (a
        `skip` row's next run is its expression's: the decision skips it)."""
        moved = 0
        exclusions = Exclusions(conn)
        for key in calendar_store.excluding(conn, tenant, name):
            row = schedule_store.get_by_id(conn, tenant, key.id)
            if row is None or row.on_excluded == "skip" or row.next_run is None:
                continue
            following = resumed(row, max(row.last_run or now, now), exclusions.of(row))
            if following != row.next_run:
                schedule_store.update_schedule(conn, row.id, {"next_run": following})
                moved += 1
        return moved


def _key(row: Any) -> str:
    """A schedule as `stack/environment/name` (the CLI's and the API's detail)."""
    return f"{row.stack}/{row.environment}/{row.name}"
