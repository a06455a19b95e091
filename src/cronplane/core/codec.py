"""One JSON codec for every record, driven by its dataclass fields.

`to_document(record)` is what `Schedule.to_dict()` and friends return, and
what the API serves; `from_document(Schedule, document)` is how the remote
client reads it back. Both walk `dataclasses.fields`, so a new field needs
no line here: datetimes travel as ISO text, UUIDs as text, tuples as lists,
nested records as documents; everything else (payloads, details) as is.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from datetime import datetime
from typing import Any, TypeVar
from uuid import UUID

R = TypeVar("R")


def to_document(record: object) -> dict[str, Any]:
    """The record keyed by its field names, JSON-ready, in its constructor's order
    (a record's own fields, then the keyword-only ones it inherits)."""
    return {name: _encode(getattr(record, name)) for name in _names(type(record))}


def encode_value(value: Any) -> Any:
    """One value as a document holds it (ISO datetimes, text UUIDs, lists)."""
    return _encode(value)


def from_document(cls: type[R], document: Mapping[str, Any]) -> R:
    """The record of class `cls` a `to_document` answer stands for (unknown keys ignored)."""
    hints = _hints(cls)
    values = {
        name: _decode(hint, document[name]) for name, hint in hints.items() if name in document
    }
    return cls(**values)


def field_names(cls: type) -> tuple[str, ...]:
    """The names of a record's init fields, in its documents' order."""
    return tuple(_hints(cls))


def _encode(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, tuple | list):
        return [_encode(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_document(value)
    return value


_HINTS: dict[object, dict[str, Any]] = {}
_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names in its constructor's order: its own, then the
    keyword-only ones it inherits (resolved once per class)."""
    found = _NAMES.get(cls)
    if found is None:
        every = sorted(dataclasses.fields(cls), key=lambda field: field.kw_only is True)
        found = _NAMES[cls] = tuple(field.name for field in every)
    return found


def _hints(cls: type) -> dict[str, Any]:
    """The init fields of a dataclass with their resolved types, in `_names`' order
    (resolved once per class)."""
    found = _HINTS.get(cls)
    if found is None:
        hints = typing.get_type_hints(cls)
        init = {field.name for field in dataclasses.fields(cls) if field.init}
        found = _HINTS[cls] = {name: hints[name] for name in _names(cls) if name in init}
    return found


def _decode(hint: Any, value: Any) -> Any:
    if value is None:
        return None
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        arms = [arm for arm in typing.get_args(hint) if arm is not type(None)]
        return _decode(arms[0], value) if len(arms) == 1 else value
    if hint is UUID:
        return value if isinstance(value, UUID) else UUID(value)
    if hint is datetime:
        return value if isinstance(value, datetime) else datetime.fromisoformat(value)
    if origin is tuple:
        item = typing.get_args(hint)[0]
        return tuple(_decode(item, part) for part in value)
    if origin is dict:
        return dict(value)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return value if isinstance(value, hint) else from_document(hint, value)
    return value
