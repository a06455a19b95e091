"""Install an importer's output and watch it fire: the real dispatcher over a FakeClock."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

from sqlalchemy import func, select

from cronplane import events as ev
from cronplane.clock import FakeClock
from cronplane.importers.translation import Translation
from cronplane.manifest import parse_manifest
from cronplane.processes.dispatcher import Dispatcher
from cronplane.service import AppReport, ScheduleService
from cronplane.store.database import Database
from cronplane.store.tables import events, schedule_state, schedules

TENANT, ENVIRONMENT = "acme", "production"
# Every outcome of a due occurrence: the instant it stood for is when it was due.
DUE_CODES = (ev.SCHEDULE_FIRED.text, ev.SKIPPED_OVERLAP.text, ev.SKIPPED_MISFIRE.text)


def install(
    database: Database, translation: Translation, clock: FakeClock
) -> tuple[ScheduleService, AppReport]:
    """`cronplane app install` of the translation's YAML (command targets enabled)."""
    service = ScheduleService(database, clock, allow_commands=True)
    manifest = parse_manifest(translation.to_yaml("test"))
    report = service.install_app(TENANT, ENVIRONMENT, manifest, actor="import-test")
    return service, report


def fired(database: Database, clock: FakeClock, until: datetime) -> dict[str, list[datetime]]:
    """Run the dispatcher from the clock's now to `until`, stepping the clock to each
    earliest `next_run` (so nothing coalesces); every due occurrence per schedule name."""
    dispatcher = Dispatcher(database, clock, holder="import-test")
    while True:
        with database.read() as conn:
            earliest = conn.execute(
                select(func.min(schedule_state.c.next_run)).where(schedule_state.c.enabled)
            ).scalar()
        if earliest is None or earliest > until:
            break
        clock.set(max(earliest, clock.now()))
        dispatcher.tick()
    query = (
        select(schedules.c.name, events.c.scheduled_for)
        .join(schedules, schedules.c.id == events.c.schedule_id)
        .where(events.c.code.in_(DUE_CODES))
        .order_by(events.c.id)
    )
    found: dict[str, list[datetime]] = defaultdict(list)
    with database.read() as conn:
        for name, instant in conn.execute(query):
            found[name].append(instant)
    return dict(found)


def instants(source: Iterator[datetime], until: datetime) -> list[datetime]:
    """The instants an iterator of occurrences yields up to `until` (inclusive)."""
    out = []
    for instant in source:
        if instant > until:
            break
        out.append(instant)
    return out


def by_name(translation: Translation) -> dict[str, dict[str, Any]]:
    """The translation's crons by name."""
    crons: dict[str, dict[str, Any]] = translation.document["crons"]
    return crons


Oracle = Callable[[datetime, datetime], list[datetime]]
