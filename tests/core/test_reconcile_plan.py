"""The sync planner's invariants, property-tested (pure: no database)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from uuid import uuid4

from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.core.fields import DECLARED_FIELDS, OVERRIDABLE_FIELDS
from cronplane.core.inputs import Declared
from cronplane.core.model import Schedule
from cronplane.core.reconcile import SyncPlan, plan_sync, restore_declared

NOW = datetime(2026, 1, 5, tzinfo=UTC)
NAMES = st.sampled_from([f"n{i}" for i in range(8)])
DECLARED = st.builds(
    Declared,
    job=st.sampled_from(["a", "b"]),
    cron=st.sampled_from(["0 * * * *", "*/5 * * * *", "30 2 * * *"]),
    timezone=st.sampled_from(["UTC", "Europe/London"]),
    payload=st.sampled_from([{}, {"k": 1}, {"k": [1, 2]}]),
    misfire_grace=st.sampled_from([None, 0, 60]),
    overlap=st.sampled_from(["skip", "allow"]),
)


def row(name: str, d: Declared, source: str, overrides: tuple[str, ...], enabled: bool) -> Schedule:
    return Schedule(
        id=uuid4(),
        tenant="t",
        stack="s",
        environment="e",
        name=name,
        job=d.job,
        cron=d.cron,
        timezone=d.timezone,
        payload=d.payload,
        enabled=enabled,
        source=source,  # type: ignore[arg-type]
        misfire_grace=d.misfire_grace,
        overlap=d.overlap,
        last_run=NOW,
        next_run=None,
        created_at=NOW,
        updated_at=NOW,
        revision=1,
        declared=d.to_dict() if source == "app" else None,
        overrides=overrides if source == "app" else (),
    )


ROWS = st.dictionaries(
    NAMES,
    st.tuples(
        DECLARED,
        st.sampled_from(["app", "app", "user", "system"]),
        st.sets(st.sampled_from(OVERRIDABLE_FIELDS)).map(lambda s: tuple(sorted(s))),
        st.booleans(),
        DECLARED,  # the values on the row, where overridden
    ),
)


def existing_rows(
    spec: dict[str, tuple[Declared, str, tuple[str, ...], bool, Declared]],
) -> list[Schedule]:
    rows = []
    for name, (declared, source, overrides, enabled, edited) in spec.items():
        base = row(name, declared, source, overrides, enabled)
        rows.append(replace(base, **{f: getattr(edited, f) for f in overrides}))
    return rows


def apply(plan: SyncPlan, rows: list[Schedule]) -> list[Schedule]:
    """What the service does with a plan, on values."""
    by_name = {r.name: r for r in rows}
    for item in plan.removed:
        del by_name[item.name]
    for update in plan.updated:
        current = by_name[update.name]
        by_name[update.name] = replace(
            current,
            **update.changes,
            declared=update.declared.to_dict(),
            revision=current.revision + 1,
        )
    for create in plan.created:
        by_name[create.name] = row(create.name, create.declared, "app", (), True)
    return list(by_name.values())


@settings(max_examples=300, deadline=None)
@given(rows=ROWS, declared=st.dictionaries(NAMES, DECLARED))
def test_applying_a_plan_then_planning_again_writes_nothing(
    rows: dict[str, tuple[Declared, str, tuple[str, ...], bool, Declared]],
    declared: dict[str, Declared],
) -> None:
    existing = existing_rows(rows)
    plan = plan_sync(declared, existing)
    after = apply(plan, existing)
    again = plan_sync(declared, after)
    assert not again.writes
    # Every declared name is accounted for exactly once.
    outcomes = (
        [c.name for c in again.created] + list(again.unchanged) + [c.name for c in again.conflicts]
    )
    assert sorted(outcomes) == sorted(declared)


@settings(max_examples=300, deadline=None)
@given(rows=ROWS, declared=st.dictionaries(NAMES, DECLARED))
def test_user_and_system_rows_never_appear_among_the_writes(
    rows: dict[str, tuple[Declared, str, tuple[str, ...], bool, Declared]],
    declared: dict[str, Declared],
) -> None:
    existing = existing_rows(rows)
    foreign = {r.name for r in existing if r.source != "app"}
    plan = plan_sync(declared, existing)
    written = (
        {c.name for c in plan.created}
        | {u.name for u in plan.updated}
        | {r.name for r in plan.removed}
    )
    assert not written & foreign
    assert {c.name for c in plan.conflicts} == foreign & set(declared)


@settings(max_examples=300, deadline=None)
@given(rows=ROWS, declared=st.dictionaries(NAMES, DECLARED))
def test_overridden_fields_and_enabled_are_never_planned(
    rows: dict[str, tuple[Declared, str, tuple[str, ...], bool, Declared]],
    declared: dict[str, Declared],
) -> None:
    existing = {r.name: r for r in existing_rows(rows)}
    for update in plan_sync(declared, existing.values()).updated:
        assert not set(update.changes) & set(existing[update.name].overrides)
        assert set(update.changes) <= set(DECLARED_FIELDS)


def test_reset_restores_declared_values_of_overridden_fields() -> None:
    d = Declared("a", "0 * * * *", "UTC", {"k": 1})
    edited = replace(row("n", d, "app", ("cron",), True), cron="5 * * * *")
    assert restore_declared(edited) == {"cron": "0 * * * *"}
