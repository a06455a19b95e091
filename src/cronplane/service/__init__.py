"""The use cases: the only place business rules run (edges stay thin).

    ScheduleService(database, clock, on_change=None)

One transaction per use case; every change writes an event with its actor.
Every write that changes a schedule runs `pg_notify('cronplane_schedules', '')`
inside its transaction (PostgreSQL) and, after commit, calls `on_change()`
(the dispatcher passes a hook that wakes its loop early).

Schedules (`service.schedules`): create_schedule, create_schedules (group
commit of many single creates), get_schedule,
get_schedule_by_id, list_schedules, update_schedule, enable_schedule,
disable_schedule, remove_schedule, record_run, reset_to_manifest,
schedule_history. Jobs (`service.jobs`): register_job, get_job, list_jobs,
update_job, deactivate_job. Apps (`service.sync`): sync, install_app,
uninstall_app.
"""

from __future__ import annotations

from cronplane.service.schedules import NewSchedule, ScheduleUseCases
from cronplane.service.sync import AppReport, SyncUseCases


class ScheduleService(ScheduleUseCases, SyncUseCases):
    """Every use case of schedules, jobs and app sync, over one Database and Clock.

    `ScheduleService(database, clock, on_change=None)`: `clock` gives "now"
    for every rule (FakeClock in tests); `on_change` runs after each commit
    that changed a schedule.
    """


__all__ = ["AppReport", "NewSchedule", "ScheduleService"]
