"""What every use case shares: the database, the clock, and the write transaction.

A use case opens exactly one transaction through `ServiceBase._write()`. When
it changed a schedule it marks the transaction (`tx.schedules_changed()`);
then, inside the transaction, PostgreSQL LISTENers are notified (delivered
at commit), and after the commit the in-process `on_change` hook runs. Both
let a dispatcher wake before its planned sleep ends.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Connection

from cronplane.clock import Clock
from cronplane.core import validation
from cronplane.core.model import Scope
from cronplane.store import schedules as schedule_store
from cronplane.store.database import Database


@dataclass
class Transaction:
    """One use case's transaction: its connection, its "now", and whether schedules changed."""

    conn: Connection
    now: datetime
    changed: bool = False

    def schedules_changed(self) -> None:
        """Record that this transaction changed a schedule (wake the dispatcher)."""
        self.changed = True


class ServiceBase:
    """The database, the clock and the change hook every use case uses."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.database = database
        self.clock = clock
        self.on_change = on_change

    @contextmanager
    def _write(self) -> Iterator[Transaction]:
        """One write transaction; notifies listeners when schedules changed."""
        with self.database.begin() as conn:
            tx = Transaction(conn, self.clock.now())
            yield tx
            if tx.changed:
                schedule_store.notify_changed(conn)
        if tx.changed and self.on_change is not None:
            self.on_change()

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        """One read-only transaction."""
        with self.database.read() as conn:
            yield conn


def checked_scope(scope: Scope) -> Scope:
    """The scope with each part checked as a name (InvalidName otherwise)."""
    validation.validate_name(scope.tenant, "tenant")
    validation.validate_name(scope.stack, "stack")
    validation.validate_name(scope.environment, "environment")
    return scope


def json_value(value: object) -> object:
    """A value fit for an event's JSON detail (datetimes as ISO text)."""
    if isinstance(value, datetime):
        return value.isoformat()
    return value
