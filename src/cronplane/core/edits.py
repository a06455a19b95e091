"""The schedule fields a person gives: how each is checked, and which an operator may
change on a row (SPEC §2). Pure; the service applies the decisions, the UI shows them.

- `check_field(name, value, seed)`: one field checked, its clean value returned
  (the cron normalized with `seed`, the schedule's identity); the coded error otherwise.
- `check_fields(values, seed)`: each given field, in field order; the first bad
  one's error.
- `editable(source)`: what an operator may change on a row of that source: on an
  `app` row only OPERATOR_FIELDS (the rest come from its manifest).
- `operator_edit(row, given)`: the changes an edit makes to a row. AppOwned for a
  field that is not the operator's; on an `app` row every changed declarable
  field is remembered in `overrides`, so sync leaves it alone.
- `check_removable(row)` / `removable(row)`: an `app` row is not the operator's
  to remove (AppOwned).

Adding a schedule field: its row in `core.fields` (its check, whether an operator may
override it on app rows).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from cronplane.core import validation
from cronplane.core.choices import Source
from cronplane.core.fields import FIELD_CHECKS, OPERATOR_FIELDS, OVERRIDABLE_FIELDS
from cronplane.core.model import Schedule
from cronplane.errors import AppOwned

# Every field a patch may set: what an operator may change on his own rows.
PATCH_FIELDS: Final = frozenset(FIELD_CHECKS)


def check_field(name: str, value: Any, seed: str) -> Any:
    """One field's clean value; its coded error (InvalidName, CronRejected, ...) otherwise."""
    return FIELD_CHECKS[name](value, seed)


def check_fields(values: Mapping[str, Any], seed: str) -> dict[str, Any]:
    """The clean value of each given field, checked in field order."""
    return {
        name: check(values[name], seed) for name, check in FIELD_CHECKS.items() if name in values
    }


def editable(source: Source | str) -> frozenset[str]:
    """The fields an operator may change on a row of this source."""
    return frozenset(OPERATOR_FIELDS) if source == "app" else PATCH_FIELDS


def check_removable(row: Schedule) -> None:
    """AppOwned for an `app` row: it goes when its manifest stops declaring it."""
    if row.source == "app":
        raise AppOwned(
            f"schedule {row.name!r} belongs to app {row.stack!r}: remove it from the "
            "manifest, or disable it",
            {"name": row.name, "stack": row.stack},
        )


def removable(row: Schedule) -> bool:
    """Whether an operator may remove the row (`check_removable` passes)."""
    return row.source != "app"


def operator_edit(row: Schedule, given: Mapping[str, Any]) -> dict[str, Any]:
    """The column changes an operator's edit makes: only fields that differ, the cron
    normalized with the row's seed, and `overrides` when an app row gains one."""
    refused = sorted(set(given) - editable(row.source))
    if refused:
        raise AppOwned(
            f"{', '.join(refused)} of app schedule {row.name!r} "
            "come from its manifest: change the manifest",
            {"name": row.name, "fields": refused},
        )
    values = dict(given)
    if "cron" in values:
        values["cron"] = validation.normalize_cron(values["cron"], row.identity)
    changes = {key: value for key, value in values.items() if getattr(row, key) != value}
    if changes and row.source == "app":
        overridden = set(row.overrides) | (set(changes) & set(OVERRIDABLE_FIELDS))
        if overridden != set(row.overrides):
            changes["overrides"] = sorted(overridden)
    return changes
