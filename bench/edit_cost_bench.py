"""The cost of one schedule edit through the service (issue 38: what a version adds).

Run by hand on a fresh database, from this tree and from another to compare::

    .venv/bin/python bench/edit_cost_bench.py sqlite:////tmp/edit-cost.db
    .venv/bin/python bench/edit_cost_bench.py postgresql+psycopg://postgres@127.0.0.1/cp_edit

One row, 1,000 edits of its cron and a label (each a definition change);
prints the mean milliseconds of an edit.
"""

from __future__ import annotations

import sys
import time
from datetime import UTC, datetime

from cronplane.clock import FakeClock
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.store.database import Database

EDITS = 1000


def main() -> None:
    database = Database(sys.argv[1])
    database.upgrade()
    clock = FakeClock(datetime(2026, 1, 5, 12, tzinfo=UTC))
    service = ScheduleService(database, clock, python_targets=("billing",))
    scope = Scope("acme", "billing", "prod")
    target = "python:billing.jobs:report"
    service.register_job("acme", "billing", JobSpec(name="report", target=target), actor="b")
    service.create_schedule(
        scope, ScheduleSpec(job="report", cron="0 2 * * *", name="nightly"), actor="b"
    )
    start = time.perf_counter()
    for n in range(EDITS):
        clock.advance(60)
        patch = SchedulePatch(cron=f"{n % 60} {n // 60 % 24} * * *", labels={"team": f"t{n}"})
        service.update_schedule(scope, "nightly", patch, actor="b")
    print(f"{(time.perf_counter() - start) * 1000 / EDITS:.2f} ms per edit ({EDITS:,} edits)")
    database.dispose()


if __name__ == "__main__":
    main()
