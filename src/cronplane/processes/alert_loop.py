"""The alert loop: one evaluator across all nodes, independent of the dispatcher.

Every node (`cronplane serve`, `dispatcher`, `worker`) runs an `AlertLoop`;
the one holding the `alerts` lease (the same lease rows and rules as the
dispatcher's, another group) evaluates every `interval` seconds
(:class:`cronplane.service.alerting.AlertEvaluator`). Its own lease, not the
dispatcher's, so that a dispatcher that is down is noticed (`absent`) by
whichever node still runs; and a broken evaluation never delays a fire.

:meth:`AlertLoop.step` is one step (lease, then a pass when leading); `run`
repeats it through the injected clock until `stop`.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from typing import Final

from sqlalchemy.exc import SQLAlchemyError

from cronplane.clock import Clock
from cronplane.core.backoff import outage_delay
from cronplane.processes.dispatch_reports import default_holder
from cronplane.service.alert_book import EvaluationReport
from cronplane.service.alerting import AlertEvaluator
from cronplane.store import lease
from cronplane.store.database import Database

log = logging.getLogger(__name__)

GROUP: Final = "alerts"
DEFAULT_INTERVAL: Final = 5.0
DEFAULT_TTL: Final = 30.0


class AlertLoop:
    """Holds the `alerts` lease and evaluates the alert rules while it does."""

    def __init__(
        self,
        database: Database,
        clock: Clock,
        *,
        holder: str | None = None,
        interval: float = DEFAULT_INTERVAL,
        ttl: float = DEFAULT_TTL,
    ) -> None:
        if interval <= 0 or ttl <= interval:
            raise ValueError("interval must be positive and shorter than the ttl")
        self.database = database
        self.clock = clock
        self.holder = holder or default_holder()
        self.interval = interval
        self.ttl = timedelta(seconds=ttl)
        self.evaluator = AlertEvaluator(database, clock)
        self.term: int | None = None
        self.last: EvaluationReport | None = None
        self._failures = 0
        self._stop = threading.Event()
        self._wake = threading.Event()

    def step(self) -> float:
        """Acquire or renew the lease; evaluate when we hold it. Returns the sleep."""
        try:
            with self.database.begin() as conn:
                lease.guard(conn, self.ttl)
                self.term = lease.acquire(
                    conn,
                    GROUP,
                    self.holder,
                    known_term=self.term,
                    now=self.clock.now(),
                    ttl=self.ttl,
                )
            if self.term is not None:
                self.last = self.evaluator.evaluate()
        except Exception as error:  # the database is away, or a bug: log, back off, go on
            self._failures += 1
            delay = outage_delay(self._failures)
            if isinstance(error, SQLAlchemyError | OSError):
                # An outage: one line per attempt, like the dispatcher's and the worker's.
                first = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
                log.warning("alert evaluation failed (%s); retrying in %.1fs", first, delay)
            else:
                log.exception("alert evaluation crashed; retrying in %.1fs", delay)
            return delay
        self._failures = 0
        return self.interval

    def run(self) -> None:
        """Step until `stop()`; release the lease at the end."""
        while not self._stop.is_set():
            sleep = self.step()
            if self._stop.is_set():
                break
            self.clock.wait(sleep, self._wake)
        self.release()

    def stop(self) -> None:
        """Ask `run` to return."""
        self._stop.set()
        self._wake.set()

    def release(self) -> None:
        """Give the lease up so another node evaluates at once."""
        if self.term is None:
            return
        try:
            with self.database.begin() as conn:
                lease.release(conn, GROUP, self.holder, self.term, self.clock.now())
        except Exception:  # shutting down: the lease expires on its own
            log.warning("could not release the alerts lease", exc_info=True)
        self.term = None
