"""Dry-run == applied: for install, sync and uninstall, the plan a dry run reports is
the change the real run applies (jobs registered, updated and deactivated
included), and the dry run itself writes nothing. Property-tested over random
sequences of manifests and environments, on SQLite and PostgreSQL."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.clock import FakeClock
from cronplane.errors import CronplaneError
from cronplane.manifest import manifest_from_data
from cronplane.service import ScheduleService
from cronplane.store.database import Database
from firing_support import START
from service_support import counts, snapshot

NAMES = ("a", "b", "c", "d")
JOBS = ("j1", "j2")
CRONS = ("@daily", "*/15 * * * *", "at 02:30", "0 9 * * 1-5")
ENVS = ("prod", "staging")
_stacks = itertools.count()

crons = st.dictionaries(
    st.sampled_from(NAMES),
    st.fixed_dictionaries(
        {"job": st.sampled_from(JOBS), "cron": st.sampled_from(CRONS)},
        optional={"timezone": st.sampled_from(["UTC", "Europe/Berlin"])},
    ),
    max_size=4,
)
# Both jobs always declared (a cron naming an undeclared job is refused up front);
# their targets vary, so installs also update jobs.
jobs = st.fixed_dictionaries(
    {
        name: st.fixed_dictionaries({"target": st.sampled_from(["python:m:f", "python:m:g"])})
        for name in JOBS
    }
)
steps = st.lists(
    st.tuples(
        st.sampled_from(["install", "sync", "uninstall"]), st.sampled_from(ENVS), jobs, crons
    ),
    min_size=1,
    max_size=6,
)


def _outcome(call: Any) -> dict[str, Any]:
    """A report or plan as a comparable document (or the coded error it raised)."""
    try:
        result = call()
    except CronplaneError as error:
        return {"error": error.code.text}
    document: dict[str, Any] = result.to_dict()
    document.pop("dry_run", None)
    return document


def _state(database: Database) -> tuple[Any, ...]:
    from sqlalchemy import select

    from cronplane.store.tables import jobs as job_table

    with database.read() as conn:
        job_rows = [tuple(r) for r in conn.execute(select(job_table).order_by(job_table.c.name))]
    return (snapshot(database), job_rows, counts(database))


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=steps)
def test_a_dry_run_reports_exactly_what_the_real_run_applies(
    database: Database, steps: list[tuple[str, str, dict[str, Any], dict[str, Any]]]
) -> None:
    check_dry_runs(database, steps)


def check_dry_runs(
    database: Database, steps: list[tuple[str, str, dict[str, Any], dict[str, Any]]]
) -> set[str]:
    """Run each step dry, then for real; return the kinds of change the real runs made."""
    exercised: set[str] = set()
    service = ScheduleService(database, FakeClock(START))
    stack = f"app{next(_stacks)}"  # a fresh stack per example: no cleanup between them
    for op, env, job_docs, cron_docs in steps:
        # Declared crons name declared jobs, or the manifest is (rightly) refused.
        document = {"name": stack, "jobs": job_docs, "crons": cron_docs}
        try:
            manifest = manifest_from_data(document)
        except CronplaneError:
            continue
        scope = (database, stack, env)

        def run(dry_run: bool, op: str = op, env: str = env, manifest: Any = manifest) -> Any:
            if op == "install":
                return lambda: service.install_app(
                    "acme", env, manifest, actor="t", dry_run=dry_run
                )
            if op == "sync":
                from cronplane.core.model import Scope

                return lambda: service.sync(
                    Scope("acme", stack, env), manifest.crons, actor="t", dry_run=dry_run
                )
            from cronplane.core.model import Scope

            return lambda: service.uninstall_app(
                Scope("acme", stack, env), actor="t", dry_run=dry_run
            )

        before = _state(database)
        planned = _outcome(run(True))
        assert _state(database) == before, f"dry {op} wrote: {scope}"
        applied = _outcome(run(False))
        assert planned == applied, (op, env, document)
        exercised.update(k for k, v in _summary(applied).items() if v)
    return exercised


def _summary(document: dict[str, Any]) -> dict[str, Any]:
    summary = dict(document.get("summary", document.get("plan", {}) and {}))
    if "plan" not in document and "created" in document:  # a bare SyncPlan
        summary = {k: len(v) for k, v in document.items() if isinstance(v, list)}
    for key in ("jobs_registered", "jobs_updated", "jobs_deactivated"):
        summary[key] = len(document.get(key, []))
    return summary


def test_the_comparison_sees_every_kind_of_change(database: Database) -> None:
    """The same check over one sequence that creates, updates and removes rows and
    registers, updates and deactivates jobs: a comparison that never met a removal
    or a deactivation would prove nothing about them."""
    first = {"j1": {"target": "python:m:f"}, "j2": {"target": "python:m:f"}}
    second = {"j1": {"target": "python:m:g"}, "j2": {"target": "python:m:f"}}
    steps = [
        ("install", "prod", first, {"a": {"job": "j1", "cron": "@daily"}, "b": {"job": "j2", "cron": "@daily"}}),
        ("install", "prod", second, {"a": {"job": "j1", "cron": "at 02:30"}}),
        ("uninstall", "prod", second, {}),
    ]  # fmt: skip
    exercised = check_dry_runs(database, steps)
    assert {"created", "updated", "removed", "jobs_registered", "jobs_deactivated"} <= exercised
