"""PostgreSQL: LISTEN on the schedules channel and wake the dispatcher on NOTIFY.

The service calls `pg_notify('cronplane_schedules', '')` in each write
transaction; PostgreSQL delivers it at commit. One thread holds a dedicated
autocommit connection; when the connection drops it reconnects with a capped
backoff, waking the dispatcher once so nothing missed in between is late.

Behind a transaction-pooling PgBouncer a LISTEN holds nothing: the server
session that ran it goes back to the pool, and no notification comes back.
Then it listens on the direct connection CRONPLANE_LISTEN_URL names, or not
at all, and the dispatcher sees another node's change at its next look
(`max_sleep`, 1 s).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg

from cronplane.clock import Clock
from cronplane.store.database import Database
from cronplane.store.dialects.conninfo import libpq_conninfo, listen_conninfo
from cronplane.store.schedules import NOTIFY_CHANNEL

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
RETRY_CAP = 30.0


def plain_url(database: Database) -> str:
    """The database URL as libpq's connection string, every host of a multi-host URL
    named (`target_session_attrs=read-write` then LISTENs on whichever is the primary)."""
    return libpq_conninfo(database.url, "CRONPLANE_DATABASE_URL")


def listen_url(database: Database) -> str | None:
    """Where to LISTEN: CRONPLANE_LISTEN_URL when set, else the database unless it is
    pooled (None: nowhere, the dispatcher polls)."""
    configured = listen_conninfo()
    if configured is not None:
        return configured
    if database.pooled:
        log.info(
            "%s goes through a transaction pooler and CRONPLANE_LISTEN_URL is unset: "
            "no LISTEN, another node's schedule changes are seen within a second",
            database.dialect,
        )
        return None
    return plain_url(database)


class ChangeListener:
    """A daemon thread calling `on_notify` for every NOTIFY on the channel."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        on_notify: Callable[[], None],
        channel: str = NOTIFY_CHANNEL,
        *,
        url: str | None = None,
    ) -> None:
        self.url = url or plain_url(database)
        self.clock = clock
        self.on_notify = on_notify
        self.channel = channel
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cronplane-listen", daemon=True)

    def start(self) -> None:
        """Start listening in the background."""
        self._thread.start()

    def stop(self) -> None:
        """Stop within about one poll interval."""
        self._stop.set()
        self._thread.join(timeout=POLL_SECONDS * 3)

    def _run(self) -> None:
        delay = 0.5
        while not self._stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f'LISTEN "{self.channel}"')
                    delay = 0.5
                    # Anything committed while we were not listening: look now.
                    self.on_notify()
                    while not self._stop.is_set():
                        for _ in conn.notifies(timeout=POLL_SECONDS, stop_after=1):
                            self.on_notify()
            except psycopg.Error as error:
                log.warning("LISTEN %s failed (%s); retrying in %.1fs", self.channel, error, delay)
                self.clock.wait(delay, self._stop)
                delay = min(RETRY_CAP, delay * 2)
