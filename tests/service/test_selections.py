"""Actions by selector in the service (issue 37), on SQLite and PostgreSQL: a row changed
after the selection was read is refused at its stale revision (the rest proceed), and
the report's counts are its rows'."""

from __future__ import annotations

from cronplane.core.inputs import SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.service import ScheduleService
from cronplane.service.selections import _attempt
from cronplane.store import schedules as schedule_store

HERE = Scope("acme", "billing", "prod")


def test_a_row_changed_since_the_selection_was_read_is_refused(
    service: ScheduleService,
) -> None:
    for name in ("a", "b"):
        spec = ScheduleSpec(job="report", cron="0 2 * * *", name=name, labels={"team": "pay"})
        service.create_schedule(HERE, spec, actor="t")
    with service.context.database.read() as conn:
        selection = schedule_store.list_all(conn, "acme", ScheduleQuery(selector="team=pay"))
    # Another operator edits `a` between the read and the action.
    service.update_schedule(HERE, "a", SchedulePatch(cron="0 3 * * *"), actor="other")
    pause = service.selections._one("pause", actor="t", until=None, note=None, missed=None)
    rows = [_attempt(pause, row, {"selector": "team=pay", "search": None}) for row in selection]
    assert [(row.name, row.outcome, row.code) for row in rows] == [
        ("a", "refused", "X412001REVSTL"),
        ("b", "changed", None),
    ]
    assert not service.get_schedule(HERE, "a").paused
    assert service.get_schedule(HERE, "b").paused


def test_the_report_counts_its_rows(service: ScheduleService) -> None:
    for name in ("a", "b", "c"):
        spec = ScheduleSpec(job="report", cron="0 2 * * *", name=name, labels={"team": "pay"})
        service.create_schedule(HERE, spec, actor="t")
    service.disable_schedule(HERE, "b", actor="t")
    report = service.act_on_selection("acme", "disable", ScheduleQuery(selector="team"), actor="t")
    shown = report.to_dict()
    assert (shown["selected"], shown["changed"], shown["already"], shown["refused"]) == (3, 2, 1, 0)
    assert [row["outcome"] for row in shown["rows"]] == ["changed", "already", "changed"]
