"""A dispatcher in its own process, for the crash, kill and pause tests.

    python dispatcher_process.py URL HOLDER TTL once|loop

`once` runs one tick (CRONPLANE_CRASH_AT may kill it mid-fire); `loop` runs
until SIGTERM. It uses the test occurrence function (`@every Ns` crons) and,
on PostgreSQL, the database's clock, as production does.
"""

from __future__ import annotations

import logging
import signal
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cronplane.clock import SystemClock
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database, DatabaseClock
from firing_support import occurrences


def main() -> None:
    url, holder, ttl, mode = sys.argv[1:5]
    logging.basicConfig(level=logging.WARNING, format=f"{holder} %(levelname)s %(message)s")
    database = Database(url)
    clock = DatabaseClock(database) if database.dialect == "postgresql" else SystemClock()
    dispatcher = Dispatcher(
        database, clock, holder=holder, ttl=float(ttl), occurrences=occurrences, batch_size=50
    )
    if mode == "once":
        report = dispatcher.tick()
        print(f"leader={report.leader} fired={report.fired} error={report.error}", flush=True)
        return
    signal.signal(signal.SIGTERM, lambda *_: dispatcher.stop())
    dispatcher.run()


if __name__ == "__main__":
    main()
