"""Alert rules scoped by a label selector (issue 37), on both databases: a rule
watches the tenant's schedules whose labels match *when judged* (failed, late,
absent follow a relabel); a bad selector is refused and nothing is stored; and
the set a selector rule watches is the set `schedule ls -l` lists for it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from alert_support import (
    KEYRING,
    START,
    TENANT,
    AlertWorld,
    alert_world,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.clock import FakeClock
from cronplane.core.alerts import Condition, RuleSpec
from cronplane.core.inputs import JobSpec, SchedulePatch, ScheduleSpec
from cronplane.core.model import Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import InvalidAlertRule
from cronplane.service import ScheduleService
from cronplane.service.alert_book import EvaluationReport, covering
from cronplane.store import alerts as alert_store
from cronplane.store.database import Database

SCOPE = Scope(TENANT, "billing", "prod")


class World(AlertWorld):
    """The shared alert world, with this file's own helpers."""

    def rule(self, name: str, condition: str, selector: str, **given: object) -> None:
        spec = RuleSpec(name, condition, scope="selector", selector=selector,
                        channels=("ops-hook",), **given)  # type: ignore[arg-type]  # fmt: skip
        self.service.add_alert_rule(TENANT, spec, actor="test")

    def schedule(self, name: str, job: str, cron: str, **labels: str) -> None:
        spec = ScheduleSpec(job, cron, name=name, labels=labels)
        self.service.create_schedule(SCOPE, spec, actor="test")

    def relabel(self, name: str, **labels: str) -> None:
        self.service.update_schedule(SCOPE, name, SchedulePatch(labels=labels), actor="test")

    def fire(self, minute: int) -> EvaluationReport:
        """Fire the minute's occurrences, run them, evaluate once they settled."""
        self.at(minute)
        self.dispatcher.tick()
        self.drain()
        self.at(minute, 5)
        return self.evaluate()

    def open_alerts(self) -> dict[str, int]:
        return {a.schedule: a.count for a in self.service.list_alerts(TENANT, status="open")}


@pytest.fixture
def world(database: Database) -> Iterator[World]:
    with alert_world(database, World) as made:
        yield made


def test_a_selector_rule_follows_the_labels_for_failures(world: World) -> None:
    world.rule("payments", "failed", "team=payments, tier!=batch")
    world.schedule("pay", "boom", "* * * * *", team="payments")
    world.schedule("batch", "boom", "* * * * *", team="payments", tier="batch")
    world.schedule("ops", "boom", "* * * * *", team="ops")
    assert world.fire(1).opened == 1
    assert world.open_alerts() == {"pay": 1}
    world.relabel("ops", team="payments")  # labelled later: covered
    world.relabel("pay", team="ops")  # relabelled away: no longer watched
    assert world.fire(2).opened == 1
    assert world.open_alerts() == {"pay": 1, "ops": 1}  # pay's failure at 10:02 not counted
    # An alert opened before the relabel still clears on a success.
    world.service.update_schedule(SCOPE, "pay", SchedulePatch(job="ok"), actor="test")
    report = world.fire(3)
    assert (report.opened, report.recovered) == (0, 1)
    assert world.open_alerts() == {"ops": 2}
    (rule,) = world.service.list_alert_rules(TENANT)
    assert (rule.scope, rule.selector) == ("selector", "team=payments,tier!=batch")


def test_late_with_a_selector_opens_and_clears_when_relabelled_away(world: World) -> None:
    world.rule("slow-start", "late", "team=payments", threshold=90)
    world.schedule("pay", "ok", "5 10 * * *", team="payments")
    world.schedule("ops", "ok", "5 10 * * *", team="ops")
    world.at(5)
    assert world.dispatcher.tick().fired == 2
    world.at(6, 31)
    assert world.evaluate().opened == 1
    assert world.open_alerts() == {"pay": 1}
    world.relabel("pay", team="ops")
    world.at(6, 40)
    assert world.evaluate().recovered == 1  # still queued, but no longer watched
    assert world.open_alerts() == {}


def test_absent_with_a_selector_covers_schedules_labelled_later(world: World) -> None:
    world.schedule("beat", "ok", "5 10 * * *", tier="critical")
    world.schedule("later", "ok", "5 10 * * *")
    world.rule("heartbeat", "absent", "tier=critical", threshold=60)
    world.schedule("fresh", "ok", "5 10 * * *", tier="critical")  # made after the rule
    world.schedule("other", "ok", "5 10 * * *", tier="batch")
    world.at(1)
    assert world.evaluate().opened == 0  # reads the created schedules
    world.relabel("later", tier="critical")
    world.relabel("beat", tier="batch")  # relabelled away before its deadline
    world.at(7)
    assert world.evaluate().opened == 2
    assert world.open_alerts() == {"later": 1, "fresh": 1}


def test_skipped_with_a_selector_opens_for_the_matching_schedule_only(world: World) -> None:
    world.rule("overlaps", "skipped", "team=payments", reasons=("overlap",))
    world.schedule("pay", "ok", "* * * * *", team="payments")
    world.schedule("ops", "ok", "* * * * *", team="ops")
    world.at(1)
    world.dispatcher.tick()  # 10:01 fires; nobody runs it
    world.at(2)
    assert world.dispatcher.tick().counts  # 10:02 skipped on both: still queued
    world.at(2, 5)
    assert world.evaluate().opened == 1
    (alert,) = world.service.list_alerts(TENANT, status="open")
    assert (alert.schedule, alert.detail["reason"]) == ("pay", "overlap")


def test_paused_past_a_limit_with_a_selector_follows_the_labels(world: World) -> None:
    world.rule("held", "skipped", "tier=critical", reasons=("paused",), threshold=60)
    world.schedule("core", "ok", "5 10 * * *", tier="critical")
    world.schedule("side", "ok", "5 10 * * *", tier="batch")
    for name in ("core", "side"):
        world.service.pause_schedule(SCOPE, name, actor="test")
    world.at(2)
    assert world.evaluate().opened == 1
    assert world.open_alerts() == {"core": 1}
    world.relabel("side", tier="critical")  # labelled later: covered at the next pass
    world.relabel("core", tier="batch")  # relabelled away: its alert clears
    world.at(3)
    report = world.evaluate()
    assert (report.opened, report.recovered) == (1, 1)
    assert world.open_alerts() == {"side": 1}


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"scope": "selector", "selector": "team in (a"}, "selector"),
        ({"scope": "selector", "selector": "tier>1"}, "selector"),
        ({"scope": "selector", "selector": "Bad Key=x"}, "selector"),
        ({"scope": "selector", "selector": "  "}, "selector"),
        ({"scope": "selector"}, "selector"),
        ({"scope": "tenant", "selector": "team=payments"}, "selector"),
        ({"scope": "selector", "selector": "team=a", "stack": "billing"}, "scope"),
    ],
)
def test_a_bad_selector_rule_is_refused_and_nothing_is_stored(
    world: World, given: dict[str, str], field: str
) -> None:
    spec = RuleSpec("bad", "failed", channels=("ops-hook",), **given)  # type: ignore[arg-type]
    with pytest.raises(InvalidAlertRule) as refused:
        world.service.add_alert_rule(TENANT, spec, actor="test")
    assert refused.value.code.text == "X400310ALRINV"
    assert refused.value.detail["field"] == field
    assert world.service.list_alert_rules(TENANT) == []


# -- the property: a selector rule watches what the listing lists ---------------------

KEYS = ("team", "tier", "zone")
VALUES = ("payments", "ops", "batch", "")
TEAMS = ("payments", "ops", None)
TIERS = ("batch", "web", "", None)

value = st.sampled_from(VALUES)
values = st.lists(value, min_size=1, max_size=3).map(lambda vs: ",".join(vs))
term = st.one_of(
    st.builds("{}={}".format, st.sampled_from(KEYS), value),
    st.builds("{}=={}".format, st.sampled_from(KEYS), value),
    st.builds("{}!={}".format, st.sampled_from(KEYS), value),
    st.builds("{} in ({})".format, st.sampled_from(KEYS), values),
    st.builds("{} notin ({})".format, st.sampled_from(KEYS), values),
    st.sampled_from(KEYS),
    st.builds("!{}".format, st.sampled_from(KEYS)),
)
selectors = st.lists(term, min_size=1, max_size=3).map(", ".join)


@pytest.fixture
def labelled(database: Database) -> ScheduleService:
    """One schedule per combination of a team and a tier (present or not)."""
    service = ScheduleService(database, FakeClock(START))
    service.register_job(TENANT, "billing", JobSpec(name="ok", target="python:x:y"), actor="t")
    service.add_alert_channel(
        TENANT, "hook", "webhook", {"url": "https://example.com/hook"},
        secret=KEYRING.seal("s"), actor="t",
    )  # fmt: skip
    for i, team in enumerate(TEAMS):
        for j, tier in enumerate(TIERS):
            labels = {k: v for k, v in (("team", team), ("tier", tier)) if v is not None}
            spec = ScheduleSpec("ok", "0 3 * * *", name=f"s{i}{j}", labels=labels)
            service.create_schedule(SCOPE, spec, actor="t")
    return service


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=selectors)
def test_a_selector_rule_watches_what_the_listing_lists(
    labelled: ScheduleService, database: Database, text: str
) -> None:
    service = labelled
    spec = RuleSpec("sel", "failed", scope="selector", selector=text, channels=("hook",))
    service.add_alert_rule(TENANT, spec, actor="t")
    try:
        page = service.list_schedules(TENANT, ScheduleQuery(selector=text, limit=100))
        listed = {s.name for s in page.items}
        with database.read() as conn:
            ids = {s.id for s in service.list_schedules(TENANT).items}
            heads = alert_store.schedule_heads(conn, ids)
            rules_of = covering(conn, [Condition.FAILED], heads)
            watched = {h.name for h in heads.values() if rules_of(h)}
        assert watched == listed
    finally:
        service.remove_alert_rule(TENANT, "sel", actor="t")
