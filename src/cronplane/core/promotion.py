"""Environments compared and promoted (issue 38): the field-wise diff of two environments'
schedules, the token that fingerprints what was read, and what a promote writes. Pure.

A schedule is compared by (stack, name) across the two environments of a tenant:

- `only_in_source`  -> a promote creates it in the target;
- `differs`         -> a promote sets the target's fields to the source's;
- `same`            -> nothing to do;
- `only_in_target`  -> left alone: a promote never removes a row (an environment
                       may have schedules of its own; removing is the manifest's or
                       an operator's act);
- `conflict`        -> owned differently (an `app` row facing a `user` row) or a
                       `system` row: reported, never written (as sync reports a
                       declared name a user row holds).

What is compared, and applied, is the *effective definition*: every field of
core.fields' table but `enabled` (`PROMOTED_FIELDS`). `enabled` and a pause are
each environment's operational state, as sync leaves `enabled` to operators: a
promote never turns a target row on or off (a row it creates takes the source's
`enabled`). For two `app` rows the manifest's part is compared too: which fields
are operator overrides (`overrides`) and the manifest's declaration (`declared`);
a promote copies both, so the target row is what the source's app and operators
made it, and the next sync of the target's own manifest judges it like any row.
Each differing field says whether its value is an override on either side.

The token is two short digests, of the target's rows and of the source's (each
row's stack, name, id and revision, with the tenant, environments and stack
compared): a promote given a token refuses when either side moved since the
diff, so what was reviewed is what is applied.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal

from cronplane.core.codec import encode_value
from cronplane.core.fields import SCHEDULE_FIELDS
from cronplane.core.model import Schedule

Status = Literal["only_in_source", "only_in_target", "differs", "same", "conflict"]
STATUSES: Final = ("only_in_source", "differs", "same", "only_in_target", "conflict")
# The effective definition a promote compares and applies (core.fields' table).
PROMOTED_FIELDS: Final = tuple(f.name for f in SCHEDULE_FIELDS if f.name != "enabled")
# Compared too when both rows are an app's: the manifest's part of the row.
APP_FIELDS: Final = ("overrides", "declared")


@dataclass(frozen=True, slots=True)
class FieldDifference:
    """One field whose value differs: the target's now (old) and the source's (new), and
    whether each is an operator override on its row."""

    field: str
    target: Any
    source: Any
    target_override: bool = False
    source_override: bool = False


@dataclass(frozen=True, slots=True)
class ScheduleDifference:
    """One schedule name (in a stack) compared across the two environments."""

    stack: str
    name: str
    status: Status
    source_kind: str | None = None
    target_kind: str | None = None
    source_revision: int | None = None
    target_revision: int | None = None
    fields: tuple[FieldDifference, ...] = ()

    @property
    def key(self) -> str:
        """`stack/name`."""
        return f"{self.stack}/{self.name}"


@dataclass(frozen=True, slots=True)
class EnvironmentDiff:
    """Two environments of a tenant compared (one stack, or every stack: `stack` None);
    `token` fingerprints the rows as read (pass it to promote)."""

    tenant: str
    from_env: str
    to_env: str
    stack: str | None
    token: str
    schedules: tuple[ScheduleDifference, ...]

    def summary(self) -> dict[str, int]:
        """How many schedules of each status."""
        return {status: sum(s.status == status for s in self.schedules) for status in STATUSES}

    def of(self, *statuses: Status) -> tuple[ScheduleDifference, ...]:
        """The schedules of these statuses."""
        return tuple(s for s in self.schedules if s.status in statuses)


def _value(row: Schedule, name: str) -> Any:
    value = encode_value(getattr(row, name))
    return sorted(value) if name == "overrides" else value


def field_differences(source: Schedule, target: Schedule) -> tuple[FieldDifference, ...]:
    """The fields whose values differ, in field order (then, for two app rows, the
    manifest's part of the row)."""
    names = [*PROMOTED_FIELDS]
    if source.source == target.source == "app":
        names.extend(APP_FIELDS)
    found: list[FieldDifference] = []
    for name in names:
        old, new = _value(target, name), _value(source, name)
        if old != new:
            found.append(
                FieldDifference(name, old, new, name in target.overrides, name in source.overrides)
            )
    return tuple(found)


def compare(
    sources: Iterable[Schedule], targets: Iterable[Schedule]
) -> tuple[ScheduleDifference, ...]:
    """Every (stack, name) of either side, by stack then name, with its status."""
    by_source = {(row.stack, row.name): row for row in sources}
    by_target = {(row.stack, row.name): row for row in targets}
    found: list[ScheduleDifference] = []
    for key in sorted(by_source.keys() | by_target.keys()):
        source, target = by_source.get(key), by_target.get(key)
        kinds = (
            None if source is None else source.source,
            None if target is None else target.source,
        )
        revisions = (
            None if source is None else source.revision,
            None if target is None else target.revision,
        )
        fields: tuple[FieldDifference, ...] = ()
        status: Status
        if "system" in kinds or (None not in kinds and kinds[0] != kinds[1]):
            status = "conflict"
        elif target is None:
            status = "only_in_source"
        elif source is None:
            status = "only_in_target"
        else:
            fields = field_differences(source, target)
            status = "differs" if fields else "same"
        found.append(ScheduleDifference(*key, status, *kinds, *revisions, fields))
    return tuple(found)


def fingerprint(rows: Iterable[Schedule], *scope: str | None) -> str:
    """A short digest of rows' identities and revisions, with the scope they were read in."""
    marks = sorted((row.stack, row.name, str(row.id), row.revision) for row in rows)
    text = json.dumps([list(scope), marks], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def token_of(
    tenant: str,
    from_env: str,
    to_env: str,
    stack: str | None,
    sources: Iterable[Schedule],
    targets: Iterable[Schedule],
) -> str:
    """`TARGET.SOURCE`: each side's fingerprint (see the module's docstring)."""
    scope = (tenant, from_env, to_env, stack)
    return f"{fingerprint(targets, *scope)}.{fingerprint(sources, *scope)}"


def moved_sides(token: str, current: str) -> list[str]:
    """Which sides (`target`, `source`) moved between `token` and `current`; both when
    the token is not one of this comparison's."""
    given, now = token.split("."), current.split(".")
    if len(given) != 2:
        return ["target", "source"]
    return [
        side for side, old, new in zip(("target", "source"), given, now, strict=True) if old != new
    ]


def promoted_changes(source: Schedule, target: Schedule) -> dict[str, Any]:
    """The column values a promote sets on `target` (the fields `field_differences`
    finds), as a row holds them."""
    changes = {d.field: getattr(source, d.field) for d in field_differences(source, target)}
    if "overrides" in changes:
        changes["overrides"] = sorted(changes["overrides"])
    return changes


def selected(
    schedules: Iterable[ScheduleDifference], only: Iterable[str] | None
) -> tuple[list[ScheduleDifference], list[str]]:
    """The compared schedules a promote limited to `only` acts on (a name, or
    `stack/name`), and the names of `only` that match no source schedule."""
    rows = list(schedules)
    if only is None:
        return rows, []
    wanted = set(only)
    picked = [s for s in rows if s.name in wanted or s.key in wanted]
    matched = {s.name for s in picked if s.status != "only_in_target"}
    matched |= {s.key for s in picked if s.status != "only_in_target"}
    return picked, sorted(wanted - matched)
