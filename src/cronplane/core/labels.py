"""Labels: a schedule's map of string keys to string values, by Kubernetes' rules.

    validate_labels(value) -> dict[str, str]     the map as stored, or InvalidRequest
    parse_pairs(["k=v", ...]) -> dict[str, str]  the CLI's `--label k=v` and the console's text
    labels_text(labels) -> "k=v, k2=v2"          how `info` and the console show them

A key is an optional prefix (at most 63 lowercase alphanumerics, `-` and `.`,
beginning and ending with an alphanumeric, like a DNS subdomain) and a `/`,
then a name of at most 63 characters: alphanumerics, `-`, `_` and `.`,
beginning and ending with an alphanumeric; a value is empty or a name of the
same rules. At most 32 labels. A refusal names the label. Kubernetes' rules
(its prefix may be 253 long; the issue's 63 is kept) because operators know
them from the selectors (issue 37) they will write, and a label copied from a
manifest of theirs is taken as it is. The rules are two regular expressions,
written so the OpenAPI document carries them as they are (api.schedule_schemas)
and a client or fuzzer generates only what is accepted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Final

from cronplane.errors import InvalidRequest

MAX_LABELS: Final = 32
MAX_NAME: Final = 63
_NAME_RE: Final = r"[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_PREFIX_RE: Final = r"[a-z0-9](?:[-a-z0-9.]{0,61}[a-z0-9])?"
KEY_REGEX: Final = rf"^(?:{_PREFIX_RE}/)?{_NAME_RE}$"
VALUE_REGEX: Final = rf"^(?:{_NAME_RE})?$"
_NAME: Final = re.compile(_NAME_RE)
_PREFIX: Final = re.compile(_PREFIX_RE)


def _refuse(message: str, label: str) -> InvalidRequest:
    return InvalidRequest(message, {"field": "labels", "label": label[:80]})


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise _refuse(f"label key {key!r} is not text", repr(key))
    prefix, slash, name = key.rpartition("/")
    if slash and not _PREFIX.fullmatch(prefix):
        raise _refuse(
            f"label {key[:80]!r}: the prefix {prefix[:80]!r} must be 1-{MAX_NAME} lowercase "
            "alphanumerics, '-' or '.', beginning and ending with an alphanumeric",
            key,
        )
    if not _NAME.fullmatch(name):
        raise _refuse(
            f"label {key[:80]!r}: the name must be 1-{MAX_NAME} alphanumerics, '-', '_' or "
            "'.', beginning and ending with an alphanumeric",
            key,
        )
    return key


def _check_value(key: str, value: object) -> str:
    if not isinstance(value, str):
        raise _refuse(f"label {key[:80]!r}: the value {value!r} is not text", key)
    if value and not _NAME.fullmatch(value):
        raise _refuse(
            f"label {key[:80]!r}: the value {value[:80]!r} must be empty or 1-{MAX_NAME} "
            "alphanumerics, '-', '_' or '.', beginning and ending with an alphanumeric",
            key,
        )
    return value


def validate_labels(value: object) -> dict[str, str]:
    """The labels as stored (keys sorted), or InvalidRequest naming the bad label."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidRequest("labels must be a map of text to text", {"field": "labels"})
    if len(value) > MAX_LABELS:
        raise InvalidRequest(f"{len(value)} labels: at most {MAX_LABELS}", {"field": "labels"})
    return {_check_key(key): _check_value(key, value[key]) for key in sorted(value, key=str)}


def parse_pairs(pairs: Iterable[str]) -> dict[str, str]:
    """`KEY=VALUE` texts as labels (checked); a later key replaces an earlier one."""
    labels: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.strip().partition("=")
        if not equals:
            raise _refuse(f"label {pair[:80]!r} is not KEY=VALUE", pair)
        labels[key.strip()] = value.strip()
    return validate_labels(labels)


def parse_text(text: str) -> dict[str, str]:
    """The console's text: `KEY=VALUE` pairs separated by commas (blank: none)."""
    return parse_pairs(pair for pair in text.split(",") if pair.strip())


def labels_text(labels: Mapping[str, str] | None) -> str:
    """`k=v, k2=v2` (keys sorted); `-` for none."""
    if not labels:
        return "-"
    return ", ".join(f"{key}={labels[key]}" for key in sorted(labels))
