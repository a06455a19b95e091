"""One row of the schedule's field table (`core.fields`): what a field is, its
default, who may set it, its check, how each edge shows it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from cronplane.core import validation
from cronplane.errors import CronplaneError, InvalidRequest

Kind = Literal[
    "name", "cron", "zone", "json", "seconds", "choice", "bool", "instant", "count", "labels", "names"
]  # fmt: skip
Check = Callable[[Any, str], Any]


@dataclass(frozen=True, slots=True)
class ScheduleField:
    """One settable field of a schedule.

    - `default`: its value when not given (a create, a manifest's cron); `factory`
      instead, for a mutable default (a map, a list): called once per use.
    - `declarable`: a manifest may declare it (`Declared`, the `declared` document).
    - `overridable`: an operator's change to it on an app row is remembered as an
      override, which sync keeps; `operator`: an operator may change it on an app
      row at all (`enabled` is never synced, so it needs no override).
    - `timing`: it decides when the row fires: a change recomputes `next_run`.
    - `since`: added after rows existed: the `declared` document leaves it out at
      its default, so older rows' documents stay equal (no re-sync churn).
    - `check(value, seed)`: the value as stored, or a coded error (`seed`: the
      schedule's identity, for `H` fields). A whole-number field (`seconds`,
      `count`) has none: `minimum`..`maximum` is its check, `error` its code.
    - `nullable`: may be null as stored (default: when its default is None).
    - `info`: how `schedule info` shows it (None: shown by a view of its own).
    - `flag`, `help`: its `schedule add` option (a `bool` field's flag sets the value
      that is not its default); `choices` for a `choice` field (`notes`: what
      each means); `required` on create.
    - `about`: what it means, for the API's document; `placeholder`, `hint`: its
      console input's blank text and the line under it.
    """

    name: str
    label: str
    kind: Kind
    check: Check | None = None
    default: Any = None
    factory: Callable[[], Any] | None = None
    declarable: bool = True
    overridable: bool = False
    operator: bool = False
    since: bool = False
    timing: bool = False
    info: Callable[[Any], str] | None = None
    flag: str = ""
    help: str = ""
    choices: tuple[str, ...] = ()
    notes: Mapping[str, str] | None = None
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    error: type[CronplaneError] = InvalidRequest
    nullable: bool | None = None
    about: str = ""
    placeholder: str = ""
    hint: str = ""

    def default_value(self) -> Any:
        """A fresh default (a new object for a mutable one)."""
        return self.factory() if self.factory is not None else self.default

    @property
    def stores_null(self) -> bool:
        """Whether a stored row may hold null here."""
        if self.nullable is not None:
            return self.nullable
        return not self.required and self.factory is None and self.default is None

    def validate(self, value: Any, seed: str) -> Any:
        """The value as stored, or this field's coded error."""
        if self.check is not None:
            return self.check(value, seed)
        if self.kind == "choice":
            return self._choice(value)
        return self._whole(value)

    def _choice(self, value: object) -> str | None:
        """One of `choices` (null when the default is null: the default)."""
        if value is None and self.default is None:
            return None
        return validation.one_of(value, self.choices, self.name, self.error)

    def _whole(self, value: object) -> int | None:
        """None, or a whole number in `minimum`..`maximum`."""
        if self.minimum is None or self.maximum is None:
            raise TypeError(f"field {self.name} has neither a check nor bounds")
        if value is None:
            return None
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and self.minimum <= value <= self.maximum
        ):
            return value
        unit = "whole seconds" if self.kind == "seconds" else "a whole number"
        raise self.error(
            f"{self.name} {value!r}"[:80]
            + f" is invalid: {unit} in {self.minimum:,}..{self.maximum:,}, or null",
            {"field": self.name},
        )
