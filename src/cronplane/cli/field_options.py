"""`schedule add`'s options, made from the field table (core.fields): one per field with a
flag, typed by its kind, and the values turned into a ScheduleSpec's."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from cronplane.cli.options import parse_json_object
from cronplane.core.fields import SCHEDULE_FIELDS
from cronplane.core.labels import parse_pairs
from cronplane.core.schedule_field import ScheduleField

F = TypeVar("F", bound=Callable[..., Any])
_INTEGERS = ("seconds", "count")


def _option(field: ScheduleField) -> Callable[[F], F]:
    """The click option of one field (its parameter is the field's name)."""
    if field.kind == "bool":  # the flag sets the value that is not the default
        return click.option(field.flag, field.name, is_flag=True, default=False, help=field.help)
    if field.kind in ("labels", "names"):  # `--label k=v`, `--exclude NAME`, repeated
        return click.option(field.flag, field.name, multiple=True, help=field.help)
    kind: Any = None
    if field.kind in _INTEGERS:
        kind = int
    elif field.choices:
        kind = click.Choice(field.choices)
    shown = field.default is not None and not field.required
    return click.option(
        field.flag,
        field.name,
        type=kind,
        required=field.required,
        default=None if field.required else field.default,
        show_default=shown,
        help=field.help,
    )


def spec_options(command: F) -> F:
    """Decorate `command` with every field's option, in the table's order."""
    for field in reversed(SCHEDULE_FIELDS):
        if field.flag:
            command = _option(field)(command)
    return command


def spec_values(given: Mapping[str, Any]) -> dict[str, Any]:
    """The options' values as ScheduleSpec's fields (a JSON text parsed, a flag turned)."""
    values: dict[str, Any] = {}
    for field in SCHEDULE_FIELDS:
        if not field.flag or field.name not in given:
            continue
        value = given[field.name]
        if field.kind == "bool":
            value = (not field.default) if value else field.default
        elif field.kind == "json":
            value = parse_json_object(value, field.name)
        elif field.kind == "labels":
            value = parse_pairs(value)
        elif field.kind == "names":
            value = list(value)
        values[field.name] = value
    return values
