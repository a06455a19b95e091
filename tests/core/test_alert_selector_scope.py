"""A selector rule's scope, pure (issue 37): `watches` is the selector's match on the
labels the schedule has when judged, `places` every schedule of the tenant; the stored
selector is canonical (checking it again changes nothing); refusals name the field."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.core.alert_rules import check_rule
from cronplane.core.alerts import AlertRule, RuleSpec, Watched, places, watches
from cronplane.core.selectors import parse_selector
from cronplane.errors import InvalidAlertRule

KEYS = ("team", "tier", "example.com/owner")
VALUES = ("payments", "ops", "")
value = st.sampled_from(VALUES)
term = st.one_of(
    st.builds("{}={}".format, st.sampled_from(KEYS), value),
    st.builds("{}!={}".format, st.sampled_from(KEYS), value),
    st.builds("{} in ({},{})".format, st.sampled_from(KEYS), value, value),
    st.builds("{} notin ({})".format, st.sampled_from(KEYS), value),
    st.sampled_from(KEYS),
    st.builds("!{}".format, st.sampled_from(KEYS)),
)
selectors = st.lists(term, min_size=1, max_size=4).map(" , ".join)
label_maps = st.dictionaries(st.sampled_from(KEYS), value, max_size=3)


def stored(spec: RuleSpec) -> AlertRule:
    checked = check_rule(spec)
    return AlertRule(
        uuid.uuid4(), "acme", checked.name, checked.condition, checked.scope, checked.stack,
        checked.environment, checked.target, checked.threshold, checked.reasons,
        checked.channels, checked.renotify, "user", "t", datetime(2026, 3, 2, tzinfo=UTC),
        selector=checked.selector,
    )  # fmt: skip


@given(text=selectors, labels=label_maps)
def test_a_selector_rule_watches_what_the_selector_matches(
    text: str, labels: dict[str, str]
) -> None:
    rule = stored(RuleSpec("r", "failed", "selector", selector=text, channels=("c",)))
    schedule = Watched("billing", "prod", "s", "j", labels)
    assert watches(rule, schedule) == parse_selector(text).matches(labels)
    assert places(rule, schedule)  # every schedule of the tenant keeps its deadlines
    again = check_rule(RuleSpec("r", "failed", "selector", selector=rule.selector, channels=("c",)))
    assert again.selector == rule.selector  # canonical: a fixed point


def test_other_scopes_ignore_labels() -> None:
    rule = stored(RuleSpec("r", "failed", channels=("c",)))
    assert watches(rule, Watched("b", "p", "s", "j", {"team": "x"}))
    assert watches(rule, Watched("b", "p", "s", "j"))


@pytest.mark.parametrize(
    ("given", "field"),
    [
        ({"scope": "selector", "selector": "a in (b"}, "selector"),
        ({"scope": "selector", "selector": ""}, "selector"),
        ({"scope": "selector"}, "selector"),
        ({"scope": "stack", "stack": "b", "selector": "a=b"}, "selector"),
        ({"scope": "selector", "selector": "a=b", "target": "x"}, "scope"),
    ],
)
def test_refusals_name_the_field(given: dict[str, str], field: str) -> None:
    with pytest.raises(InvalidAlertRule) as refused:
        check_rule(RuleSpec("r", "failed", channels=("c",), **given))  # type: ignore[arg-type]
    assert refused.value.detail["field"] == field
