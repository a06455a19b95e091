"""An `absent` rule expects a run only on the days a schedule runs (issue 36): a weekday
schedule that excludes weekends is not "absent" on Saturday, and a run moved to Monday
is expected on Monday. Both databases, the evaluator's own watches read back."""

from __future__ import annotations

from datetime import UTC, datetime

from alert_support import TENANT, add_channels, receivers
from sqlalchemy import select

from cronplane.clock import FakeClock
from cronplane.core.alerts import RuleSpec
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from cronplane.store.tables import alert_watches

SCOPE = Scope(TENANT, "billing", "prod")
FRIDAY_NOON = datetime(2026, 3, 6, 12, 0, tzinfo=UTC)


def test_a_skipped_saturday_is_not_expected_and_a_moved_one_is_expected_monday(
    database: Database,
) -> None:
    service = ScheduleService(database, FakeClock(FRIDAY_NOON))
    service.save_calendar(TENANT, "weekends", weekly=["sat", "sun"], actor="t")
    service.register_job(
        TENANT, "billing", JobSpec(name="ok", target="python:alert_handlers:ok"), actor="t"
    )
    deadlines = {}
    with receivers() as found:
        channels = tuple(add_channels(service, found))
        for on_excluded in ("next", "skip"):
            name = f"saturdays-{on_excluded}"
            schedule = ScheduleSpec(
                "ok", "0 9 * * 6", name=name, exclude=["weekends"], on_excluded=on_excluded
            )
            row = service.create_schedule(SCOPE, schedule, actor="t")
            rule = RuleSpec(f"quiet-{on_excluded}", "absent", "schedule", "billing", "prod",
                            name, threshold=3600, channels=channels)  # fmt: skip
            service.add_alert_rule(TENANT, rule, actor="t")
            with database.read() as conn:
                due = conn.execute(
                    select(alert_watches.c.due_at).where(alert_watches.c.schedule_id == row.id)
                ).scalar_one_or_none()
            deadlines[on_excluded] = None if due is None else due.astimezone(UTC)
    # next: Saturday's 09:00 runs on Monday, so Monday 09:00 + the threshold's hour.
    assert deadlines["next"] == datetime(2026, 3, 9, 10, 0, tzinfo=UTC)
    # skip: no Saturday ever runs, so the rule expects nothing (no watch), rather than
    # an alert every Saturday at 10:00.
    assert deadlines["skip"] is None
