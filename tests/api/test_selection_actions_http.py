"""Actions by selector over real HTTP (issue 37), on SQLite and PostgreSQL: the whole
selection, each row one revision-checked change whose event carries the selector; a dry
run lists and changes nothing; more than 1,000 rows need `confirm`; a row that refuses
is listed as refused and the rest proceed; each action needs its single-row permission."""

from __future__ import annotations

from typing import Any

from api_support import Api
from sqlalchemy import func, select

from cronplane.core.access import Role
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.selections import MAX_UNCONFIRMED
from cronplane.store.schedules import insert_rows
from cronplane.store.tables import events, queue_items
from firing_support import schedule_row
from service_support import snapshot

A = "/tenants/acme/schedules/actions/"
HERE = Scope("acme", "billing", "prod")


def _seed(api: Api) -> None:
    api.service.register_job(
        "acme", "billing", JobSpec(name="export", target="python:billing.jobs:export"), actor="t"
    )
    for name, job, labels in (
        ("pay-a", "report", {"team": "payments", "region": "eu-west"}),
        ("pay-b", "report", {"team": "payments", "region": "us-east"}),
        ("pay-c", "export", {"team": "payments", "region": "eu-west"}),
        ("ops-a", "report", {"team": "ops", "region": "eu-west"}),
    ):
        spec = ScheduleSpec(job=job, cron="0 2 * * *", name=name, labels=labels)
        api.service.create_schedule(HERE, spec, actor="t")


def _act(api: Api, action: str, role: Role = Role.ADMIN, **body: Any) -> Any:
    return api.call("POST", A + action, json=body, role=role)


def test_a_dry_run_lists_the_selection_and_changes_nothing(seeded: Api) -> None:
    _seed(seeded)
    before = snapshot(seeded.database)
    answer = _act(seeded, "pause", selector="team=payments", dry_run=True)
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert [row["name"] for row in report["rows"]] == ["pay-a", "pay-b", "pay-c"]
    assert {row["outcome"] for row in report["rows"]} == {"changed"}
    assert (report["selected"], report["changed"], report["dry_run"]) == (3, 3, True)
    assert snapshot(seeded.database) == before


def test_pause_then_resume_by_selector_each_row_with_its_event(seeded: Api) -> None:
    _seed(seeded)
    seeded.service.pause_schedule(HERE, "pay-b", actor="t")
    answer = _act(seeded, "pause", selector="team=payments", q="report", note="migration")
    report = answer.json()
    assert (report["selected"], report["changed"], report["already"], report["refused"]) == (
        2,
        1,
        1,
        0,
    )
    assert {row["name"]: row["outcome"] for row in report["rows"]} == {
        "pay-a": "changed",
        "pay-b": "already",
    }
    paused = seeded.service.get_schedule(HERE, "pay-a")
    assert paused.paused and paused.paused_note == "migration" and paused.revision == 2
    assert not seeded.service.get_schedule(HERE, "pay-c").paused  # job export: not searched
    history = seeded.service.schedule_history(HERE, "pay-a")
    assert history[0].detail["selector"] == "team=payments"
    assert history[0].detail["search"] == "report"
    resumed = _act(seeded, "resume", selector="region=eu-west", missed="skip").json()
    assert {row["name"]: row["outcome"] for row in resumed["rows"]} == {
        "ops-a": "already",
        "pay-a": "changed",
        "pay-c": "already",
    }


def test_enable_disable_and_run_report_what_each_row_did(seeded: Api) -> None:
    _seed(seeded)
    disabled = _act(seeded, "disable", selector="region in (eu-west)").json()
    assert disabled["changed"] == 3
    assert not seeded.service.get_schedule(HERE, "ops-a").enabled
    enabled = _act(seeded, "enable", selector="region").json()
    assert (enabled["changed"], enabled["already"]) == (3, 1)
    # A row whose job is inactive refuses its run; the others are enqueued.
    seeded.service.deactivate_job("acme", "billing", "export", actor="t")
    ran = _act(seeded, "run", selector="team=payments").json()
    outcomes = {row["name"]: row for row in ran["rows"]}
    assert (ran["changed"], ran["refused"]) == (2, 1)
    assert outcomes["pay-c"]["outcome"] == "refused"
    assert outcomes["pay-c"]["code"] == "X409904JOBINA"
    assert outcomes["pay-a"]["item_id"] and outcomes["pay-c"].get("item_id") is None
    with seeded.database.read() as conn:
        items = conn.execute(select(func.count()).select_from(queue_items)).scalar_one()
        runs = conn.execute(
            select(events.c.detail).where(events.c.code == "V202007SCHRUN")
        ).scalars()
        assert items == 2 and [d["selector"] for d in runs] == ["team=payments"] * 2


def test_over_a_thousand_rows_need_confirm(seeded: Api) -> None:
    rows = [
        {**schedule_row(f"bulk-{n:04d}", next_run=None), "labels": {"bulk": "yes"}}
        for n in range(MAX_UNCONFIRMED + 1)
    ]
    with seeded.database.begin() as conn:
        insert_rows(conn, rows)
    refused = _act(seeded, "disable", selector="bulk=yes")
    assert refused.status_code == 400
    assert refused.json()["code"] == "X400007REQINV"
    assert refused.json()["detail"] == {"field": "confirm", "selected": 1001, "limit": 1000}
    assert _act(seeded, "disable", selector="bulk=yes", dry_run=True).json()["changed"] == 1001
    # Every row enabled already: confirmed, nothing to write.
    confirmed = _act(seeded, "enable", selector="bulk=yes", confirm=True).json()
    assert (confirmed["selected"], confirmed["already"]) == (1001, 1001)


def test_no_selection_a_bad_selector_and_a_role_without_the_permission(seeded: Api) -> None:
    _seed(seeded)
    before = snapshot(seeded.database)
    empty = _act(seeded, "pause")
    assert empty.status_code == 400 and empty.json()["detail"]["field"] == "selector"
    bad = _act(seeded, "pause", selector="team in (payments")
    assert bad.status_code == 400 and bad.json()["detail"]["field"] == "selector"
    # An operator may toggle and run but not pause (UPDATE), as for one row.
    assert _act(seeded, "pause", Role.OPERATOR, selector="team").status_code == 403
    assert _act(seeded, "disable", Role.VIEWER, selector="team").status_code == 403
    unknown = _act(seeded, "pause", selector="team", colour="red")
    assert unknown.status_code == 400
    assert snapshot(seeded.database) == before
    assert _act(seeded, "disable", Role.OPERATOR, selector="team=ops").json()["changed"] == 1


def test_a_blank_search_gives_way_to_q(seeded: Api) -> None:
    """Found by the fuzz test: `{"q": "x", "search": ""}` names the rows by `q` (a blank
    `search` says nothing), in an action and in the listing."""
    body = {"q": "nightly", "search": "", "dry_run": True}
    answer = seeded.call("POST", "/tenants/acme/schedules/actions/pause", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["selected"] >= 1
    listed = seeded.call("GET", "/tenants/acme/schedules", params={"q": "nightly", "search": ""})
    assert listed.status_code == 200 and listed.json()["items"]
