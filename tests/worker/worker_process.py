"""A worker process for the kill tests: `worker_process.py URL NAME CLAIM_BATCH`, run until killed."""

from __future__ import annotations

import sys

from cronplane.clock import SystemClock
from cronplane.processes.worker import Worker
from cronplane.store.database import Database

if __name__ == "__main__":
    url, name, batch = sys.argv[1:4]
    Worker(Database(url), SystemClock(), name=name, claim_batch=int(batch), poll=0.05).run()
