"""The pure alert decisions: one open alert per (rule, schedule), repeats update it,
re-notify only after the interval, a clearing closes it and notifies once; rule checks."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cronplane.core.alert_channels import check_channel
from cronplane.core.alert_rules import check_rule
from cronplane.core.alerts import (
    SCOPE_PARTS,
    Alert,
    AlertRule,
    NotificationKind,
    Observation,
    RuleSpec,
    Watched,
    on_cleared,
    on_observed,
    scoped,
    watches,
)
from cronplane.core.codec import to_document
from cronplane.errors import InvalidAlertRule, InvalidChannel

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
SEALED = "sealed:v1:x"


def rule(renotify: int = 600, **given: object) -> AlertRule:
    values: dict[str, object] = {
        "id": uuid.uuid4(),
        "tenant": "acme",
        "name": "r",
        "condition": "failed",
        "scope": "tenant",
        "stack": None,
        "environment": None,
        "target": None,
        "threshold": None,
        "reasons": (),
        "channels": ("ops",),
        "renotify": renotify,
        "source": "user",
        "created_by": "t",
        "created_at": T0,
    }
    values.update(given)
    return AlertRule(**values)  # type: ignore[arg-type]


def fresh(r: AlertRule, seen: Observation, now: datetime) -> Alert:
    return Alert(
        uuid.uuid4(), r.tenant, r.id, r.name, r.condition, uuid.UUID(int=1), "s", "b", "p",
        "open", 1, now, seen.at, now, None, None, None, seen.key, dict(seen.detail),
    )  # fmt: skip


# A stream of steps: (seconds later, observed key or None for "the condition cleared").
steps = st.lists(
    st.tuples(st.integers(0, 1200), st.one_of(st.none(), st.sampled_from("abcd"))),
    max_size=40,
)


@given(steps, st.integers(60, 900))
def test_a_stream_of_observations_notifies_by_the_rules(
    stream: list[tuple[int, str | None]], renotify: int
) -> None:
    r = rule(renotify)
    now, current = T0, None
    opened = recovered = 0
    last_notified: datetime | None = None
    keys_while_open: list[str] = []
    for later, key in stream:
        now += timedelta(seconds=later)
        if key is None:
            decision = on_cleared(current, now)
            if current is None or current.status != "open":
                assert decision is None
                continue
            assert decision is not None and decision.notify == NotificationKind.RECOVERED
            assert decision.alert.status == "closed" and decision.alert.closed_at == now
            recovered += 1
            current = decision.alert
            continue
        seen = Observation(key, now)
        was_open = current is not None and current.status == "open"
        decision = on_observed(r, current, fresh(r, seen, now), seen, now)
        if not was_open:
            assert decision is not None and decision.notify == NotificationKind.OPENED
            opened += 1
            keys_while_open = [key]
            last_notified = now
        elif decision is None:
            # The same instance again within the interval: nothing changes.
            assert current is not None and key == current.last_key
            assert now - current.notified_at < timedelta(seconds=renotify)
            continue
        else:
            assert last_notified is not None
            due = now - last_notified >= timedelta(seconds=renotify)
            assert (decision.notify == NotificationKind.REPEATED) == due
            if due:
                last_notified = now
            if current is not None and key != current.last_key:
                keys_while_open.append(key)
        current = decision.alert
        assert current.status == "open" and current.notified_at == last_notified
        # Count: how many distinct instances (consecutive keys) were seen while open.
        assert current.count == len(keys_while_open)
    assert recovered <= opened <= recovered + 1


def test_an_open_alert_repeats_silently_then_renotifies_after_the_interval() -> None:
    r = rule(600)
    first = Observation("event:1", T0)
    opened = on_observed(r, None, fresh(r, first, T0), first, T0)
    assert opened is not None and opened.notify == NotificationKind.OPENED
    later = T0 + timedelta(seconds=599)
    second = Observation("event:2", later)
    quiet = on_observed(r, opened.alert, fresh(r, second, later), second, later)
    assert quiet is not None and quiet.notify is None and quiet.alert.count == 2
    assert quiet.alert.last_seen_at == later and quiet.alert.notified_at == T0
    due = T0 + timedelta(seconds=600)
    third = Observation("event:3", due)
    loud = on_observed(r, quiet.alert, fresh(r, third, due), third, due)
    assert loud is not None and loud.notify == NotificationKind.REPEATED
    assert loud.alert.count == 3 and loud.alert.id == opened.alert.id


@given(
    st.sampled_from(["tenant", "stack", "job", "schedule"]),
    st.sampled_from(["b1", "b2"]),
    st.sampled_from(["p1", "p2"]),
    st.sampled_from(["j1", "j2"]),
    st.sampled_from(["s1", "s2"]),
)
def test_a_rule_watches_exactly_its_scope(
    scope: str, stack: str, env: str, job: str, name: str
) -> None:
    target = {"job": "j1", "schedule": "s1"}.get(scope)
    r = rule(scope=scope, stack=None if scope == "tenant" else "b1",
             environment=None if scope in ("tenant", "stack") else "p1", target=target)  # fmt: skip
    inside = {
        "tenant": True,
        "stack": stack == "b1",
        "job": (stack, env, job) == ("b1", "p1", "j1"),
        "schedule": (stack, env, name) == ("b1", "p1", "s1"),
    }[scope]
    assert watches(r, Watched(stack, env, name, job)) == inside


@pytest.mark.parametrize(
    ("spec", "field"),
    [
        (RuleSpec("r", "exploded", channels=("c",)), "condition"),
        (RuleSpec("r", "failed", scope="galaxy", channels=("c",)), "scope"),
        (RuleSpec("r", "failed", scope="schedule", stack="b", channels=("c",)), "environment"),
        (RuleSpec("r", "failed", scope="stack", channels=("c",)), "stack"),
        (RuleSpec("r", "failed", stack="b", channels=("c",)), "scope"),
        (RuleSpec("r", "late", channels=("c",)), "threshold"),
        (RuleSpec("r", "absent", threshold=0, channels=("c",)), "threshold"),
        (RuleSpec("r", "failed", threshold=60, channels=("c",)), "threshold"),
        (RuleSpec("r", "skipped", reasons=("boredom",), channels=("c",)), "reasons"),
        (RuleSpec("r", "failed", reasons=("overlap",), channels=("c",)), "reasons"),
        (RuleSpec("r", "failed"), "channels"),
        (RuleSpec("r", "failed", channels=("c", "c")), "channels"),
        (RuleSpec("r", "failed", channels=("c",), renotify=5), "renotify"),
    ],
)
def test_bad_rules_are_refused_naming_the_field(spec: RuleSpec, field: str) -> None:
    with pytest.raises(InvalidAlertRule) as refused:
        check_rule(spec)
    assert refused.value.detail["field"] == field
    assert refused.value.code.text == "X400310ALRINV"


def test_a_good_rule_is_normalized() -> None:
    spec = RuleSpec("r", "skipped", reasons=("overlap", "misfire", "overlap"), channels=("c",))
    assert check_rule(spec) == replace(spec, reasons=("misfire", "overlap"))


@pytest.mark.parametrize(
    ("kind", "config", "secret", "field"),
    [
        ("pager", {}, None, "kind"),
        ("webhook", {"url": "ftp://x"}, SEALED, "config.url"),
        ("webhook", {"url": "https://x"}, None, "secret"),
        ("webhook", {"url": "https://x", "extra": 1}, SEALED, "config.extra"),
        ("slack", {}, None, "secret"),
        ("email", {"host": "h", "sender": "a@b", "to": []}, None, "config.to"),
        ("email", {"host": "h", "sender": "a@b", "to": ["a@b"], "port": 0}, None, "config.port"),
        ("email", {"host": "h\x00", "sender": "a@b", "to": ["a@b"]}, None, "config.host"),
        ("email", {"host": "h", "sender": "a@b", "to": ["a@b"], "username": "u"}, None, "secret"),
    ],
)
def test_bad_channels_are_refused_naming_the_field(
    kind: str, config: dict[str, object], secret: str | None, field: str
) -> None:
    with pytest.raises(InvalidChannel) as refused:
        check_channel(kind, config, secret)
    assert refused.value.detail["field"] == field


@given(
    st.sampled_from([None, T0 + timedelta(minutes=5)]),
    st.sampled_from([None, "ann"]),
    st.dictionaries(st.sampled_from(["reason", "seconds"]), st.integers(0, 99)),
)
def test_an_alerts_document_is_its_record_encoded(
    closed: datetime | None, acked_by: str | None, detail: dict[str, int]
) -> None:
    seen = Observation("k", T0, detail)
    alert = replace(fresh(rule(), seen, T0), closed_at=closed, acked_at=closed, acked_by=acked_by)
    document = alert.to_dict()
    # Besides its fields, the document says its worst delivery (derived from `deliveries`).
    assert document.pop("delivery") == alert.delivery
    assert document == to_document(alert)


@pytest.mark.parametrize(
    ("reasons", "threshold", "refused"),
    [(("paused",), 60, False), ((), 60, True), (("overlap", "paused"), 60, True),
     (("paused",), 0, True), (("paused",), None, False)],
)  # fmt: skip
def test_a_skipped_threshold_is_a_pause_limit(
    reasons: tuple[str, ...], threshold: int | None, refused: bool
) -> None:
    spec = RuleSpec("r", "skipped", reasons=reasons, threshold=threshold, channels=("ops",))
    if refused:
        with pytest.raises(InvalidAlertRule) as caught:
            check_rule(spec)
        assert caught.value.detail == {"field": "threshold"}
    else:
        assert check_rule(spec).threshold == threshold


@given(
    st.sampled_from(["schedule", "job", "stack", "tenant", "selector"]),
    st.sampled_from([None, "billing"]),
    st.sampled_from([None, "prod"]),
    st.sampled_from([None, "nightly"]),
    st.sampled_from([None, "team=payments"]),
)
def test_a_scoped_rule_keeps_only_what_its_scope_names(
    scope: str, stack: str | None, environment: str | None, target: str | None, selector: str | None
) -> None:
    spec = RuleSpec("r", "failed", scope, stack, environment, target, channels=("ops",),
                    selector=selector)  # fmt: skip
    kept = scoped(spec)
    for part in ("stack", "environment", "target", "selector"):
        expected = getattr(spec, part) if part in SCOPE_PARTS[scope] else None
        assert getattr(kept, part) == expected
    # Refused, if at all, for a part its scope needs and the form left empty: never for
    # one it does not name.
    try:
        check_rule(kept)
    except InvalidAlertRule as refused:
        assert refused.detail["field"] in SCOPE_PARTS[scope]
