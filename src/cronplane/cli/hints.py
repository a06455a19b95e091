"""Where else to look: what an empty listing or a missing name tells the operator.

Presentation only (no rule): the hints page through the tenant's schedules
with the listing every surface has, locally or with --url.
"""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, NoReturn

import click

from cronplane.core.cron_zones import legacy_zone_note
from cronplane.core.model import Schedule, Scope
from cronplane.core.queries import ScheduleQuery
from cronplane.errors import AlertRuleNotFound, JobNotFound, ScheduleNotFound

if TYPE_CHECKING:
    from cronplane.service.port import ControlPlane

PAGE = 1000
MAX_PAGES = 10  # a hint is not worth reading more than 10 000 rows


def _walk(
    plane: ControlPlane, tenant: str, filters: ScheduleQuery | None = None
) -> tuple[list[Schedule], bool]:
    """The tenant's rows (up to MAX_PAGES pages), and whether the walk stopped there."""
    rows: list[Schedule] = []
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        query = replace(filters or ScheduleQuery(), cursor=cursor, limit=PAGE)
        page = plane.list_schedules(tenant, query)
        rows.extend(page.items)
        cursor = page.next_cursor
        if cursor is None:
            return rows, False
    return rows, True


def _scopes(rows: Iterable[Schedule], name: str | None = None) -> Counter[str]:
    """Rows per `stack/environment` (only NAME's, when given)."""
    return Counter(
        f"{row.stack}/{row.environment}" for row in rows if name is None or row.name == name
    )


def empty_listing(
    plane: ControlPlane, tenant: str, here: str, filters: ScheduleQuery
) -> str | None:
    """What to say when the scope `here` (stack/env) listed nothing, or None."""
    rows, more = _walk(plane, tenant, filters)
    found = _scopes(rows)
    found.pop(here, None)
    if not found:
        return None
    total = sum(found.values())
    where = ", ".join(f"{scope}: {n}" for scope, n in sorted(found.items()))
    return (
        f"no schedules in {tenant}/{here}; the tenant has {total}{'+' if more else ''} in other "
        f"stacks/environments ({where}): add --all, or --stack S --env E"
    )


def missing_name(plane: ControlPlane, tenant: str, name: str) -> str | None:
    """Where NAME exists in the tenant, or the names it is likely a typo of, for a
    not-found message; None when neither."""
    rows, _ = _walk(plane, tenant)  # one read serves both answers
    found = _scopes(rows, name)
    if not found:
        return did_you_mean(name, (row.name for row in rows))
    return f"{name!r} exists in " + ", ".join(
        f"--stack {scope.split('/')[0]} --env {scope.split('/')[1]}" for scope in sorted(found)
    )


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """`did you mean 'x'?` for the known names closest to a mistyped one, or None."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=3)
    if not close:
        return None
    return "did you mean " + " or ".join(repr(found) for found in close) + "?"


def missing_job(plane: ControlPlane, tenant: str, stack: str, error: JobNotFound) -> NoReturn:
    """Raise `error` again, with the stack's job names it is likely a typo of."""
    job = str((error.detail or {}).get("job", ""))
    hint = did_you_mean(job, (j.name for j in plane.list_jobs(tenant, stack))) if job else None
    if hint is None:
        raise error
    raise JobNotFound(f"{error.message}; {hint}", error.detail) from error


def missing_rule(plane: ControlPlane, tenant: str, error: AlertRuleNotFound) -> NoReturn:
    """Raise `error` again, with the tenant's rule names it is likely a typo of."""
    name = str((error.detail or {}).get("name", ""))
    rules = plane.list_alert_rules(tenant)
    hint = did_you_mean(name, (rule.name for rule in rules)) if name else None
    if hint is None:
        raise error
    raise AlertRuleNotFound(f"{error.message}; {hint}", error.detail) from error


def unknown_stack(plane: ControlPlane, tenant: str, stack: str) -> str | None:
    """What to say when STACK has no schedule in the tenant: the stacks it is likely a
    typo of; None when the tenant has rows of that stack (in some environment)."""
    rows, _ = _walk(plane, tenant)
    stacks = {row.stack for row in rows}
    if stack in stacks:
        return None
    hint = did_you_mean(stack, stacks)
    return f"the tenant {tenant} has no app {stack!r}" + (f"; {hint}" if hint else "")


def existing_schedule(plane: ControlPlane, scope: Scope, name: str) -> Schedule:
    """The schedule NAME in `scope`; its ScheduleNotFound says where else it exists."""
    try:
        return plane.get_schedule(scope, name)
    except ScheduleNotFound as error:
        hint = missing_name(plane, scope.tenant, name)
        if hint is None:
            raise
        raise ScheduleNotFound(f"{error.message}; {hint}", error.detail) from error


def legacy_zone(name: str) -> None:
    """Warn on stderr when `name` is a legacy zone (EST, CET, US/Eastern…): valid, but
    rarely the clocks meant (core.cron_zones.legacy_zone_note)."""
    note = legacy_zone_note(name)
    if note is not None:
        click.echo(f"warning: {note}", err=True)
