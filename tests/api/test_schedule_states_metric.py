"""`cronplane_schedules{state}` (issue 37, metrics): schedules per state, scraped over
HTTP on both databases, equal to the states the service derives (the SQL CASE held to
`core.model.STATE_RULES`), and labelled by `state` only: a schedule's user labels
never become metric labels (unbounded cardinality: docs/operations.md)."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta

import pytest
from api_support import START, make_api
from prometheus_client.parser import text_string_to_metric_families

from cronplane.api.metrics import SCHEDULE_LABELS
from cronplane.core.inputs import JobSpec, ScheduleSpec
from cronplane.core.model import STATES, Scope
from cronplane.processes.dispatcher import Dispatcher
from cronplane.store.database import Database

SCOPE = Scope("acme", "billing", "prod")


def test_schedules_by_state_carry_the_state_label_only(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CRONPLANE_METRICS_TOKEN", raising=False)
    api = make_api(database)
    service = api.service
    service.register_job("acme", "billing", JobSpec(name="job", target="python:m:f"), actor="t")
    labels = {"team": "payments", "example.com/owner": "alice"}

    def make(name: str, cron: str = "* * * * *", **fields: object) -> None:
        spec = ScheduleSpec("job", cron, name=name, labels=labels, **fields)  # type: ignore[arg-type]
        service.create_schedule(SCOPE, spec, actor="t")

    for name in ("a1", "a2", "off", "held"):
        make(name)
    once_at = (START + timedelta(minutes=1)).replace(second=0)
    make("once", cron=f"@once {once_at.isoformat()}")
    make("window", end_at=START + timedelta(minutes=1, seconds=30))
    service.disable_schedule(SCOPE, "off", actor="t")
    service.pause_schedule(SCOPE, "held", actor="t", until=None)
    api.clock.set(START + timedelta(minutes=2))
    Dispatcher(database, api.clock).tick()  # the one-off fires: done; the window ends

    derived = Counter(s.state for s in service.list_schedules("acme").items)
    assert set(derived) == set(STATES)  # every state is there

    scrape = api.client.get("/metrics")
    assert scrape.status_code == 200
    (family,) = [
        f for f in text_string_to_metric_families(scrape.text) if f.name == "cronplane_schedules"
    ]
    assert {frozenset(sample.labels) for sample in family.samples} == {frozenset(SCHEDULE_LABELS)}
    assert SCHEDULE_LABELS == ("state",)
    counted = {sample.labels["state"]: int(sample.value) for sample in family.samples}
    assert counted == {state: derived.get(state, 0) for state in STATES}
    for value in (*labels, *labels.values()):  # no user label anywhere in the exposition
        assert value not in scrape.text
