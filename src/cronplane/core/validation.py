"""Input rules (SPEC §2, §10), as pure functions that return the clean value or raise.

Each check raises the most specific coded error and names the field in its
message, so the manifest loader can prefix a path and the CLI and API can
show it as is. Nothing here reads a clock: "now" is an argument.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Sequence
from typing import Any, Final, TypeVar

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from cronplane.core import cron as cron_engine
from cronplane.core.choices import OVERLAPS, Overlap
from cronplane.errors import (
    CronplaneError,
    CronRejected,
    IntervalTooShort,
    InvalidName,
    InvalidPayload,
    InvalidRequest,
    ScheduleSyntax,
)

# 1-64 of letters, digits, `.`, `_`, `-`, except the path segments `.` and `..`,
# which URL clients normalize away (the name would be unreachable). Written
# without look-arounds so the OpenAPI document can carry it as is.
NAME_REGEX: Final = (
    r"^(?:[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}"
    r"|\.[A-Za-z0-9_-][A-Za-z0-9._-]{0,62}"
    r"|\.\.[A-Za-z0-9._-]{1,62})$"
)
NAME_PATTERN: Final = re.compile(NAME_REGEX)
MAX_NAME_LENGTH: Final = 64
MAX_PAYLOAD_BYTES: Final = 64 * 1024
MAX_PAYLOAD_DEPTH: Final = 32
MAX_CRON_LENGTH: Final = 256  # the column's width
MAX_TITLE_LENGTH: Final = 200
# A job's or schedule's `timeout`: one item may run at most a day.
MAX_TIMEOUT: Final = 24 * 3600
# A job's `max_concurrency`.
MAX_CONCURRENCY: Final = 10_000
SEALED_PREFIX: Final = "sealed:v1:"
REDACTED: Final = "(redacted)"
_URLSAFE_BASE64: Final = re.compile(r"[A-Za-z0-9_-]+={0,2}")
# A Fernet token: version byte, 8-byte time, 16-byte IV, whole AES blocks, 32-byte HMAC.
_FERNET_OVERHEAD: Final = 1 + 8 + 16 + 32
_FERNET_BLOCK: Final = 16
# `\u0000` in JSON text, unless its backslash is itself escaped (`\\u0000`).
_JSON_NUL: Final = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


def validate_name(value: object, what: str = "name") -> str:
    """A name of 1-64 letters, digits, `.`, `_`, `-`, not `.` or `..`; InvalidName otherwise."""
    if not isinstance(value, str) or NAME_PATTERN.fullmatch(value) is None:
        # ascii(): the message and detail may quote a lone surrogate; keep them printable.
        shown = ascii(value[:100] if isinstance(value, str) else value)[:100]
        raise InvalidName(
            f"{what} {shown} is invalid: use 1-64 of letters, digits, '.', '_', '-' "
            "(not '.' or '..')",
            {"field": what, "value": str(value)[:100].encode(errors="backslashreplace").decode()},
        )
    return value


def comma_list(text: str | None) -> list[str]:
    """The items of a list a person typed, separated by commas or new lines: trimmed,
    blanks dropped (the console's and the CLI's calendar names, weekdays and dates)."""
    return [item.strip() for item in (text or "").replace("\n", ",").split(",") if item.strip()]


def storable_text(value: str) -> bool:
    """Whether both databases can store `value`: valid UTF-8 (no lone surrogate), no NUL."""
    # PostgreSQL refuses NUL in text and jsonb; SQLite would keep it: refuse it on both.
    if "\x00" in value:
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def payload_depth(value: object) -> int:
    """Nesting depth of a JSON value: a scalar is 0, `{}` is 1, `{"a": []}` is 2."""
    # Iterative, so a hostile 10,000-deep document cannot exhaust the stack.
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: list[object] = list(node.values())
        elif isinstance(node, list):
            children = list(node)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        if depth + 1 > MAX_PAYLOAD_DEPTH:
            return depth + 1
        stack.extend((child, depth + 1) for child in children)
    return deepest


def validate_payload(value: object, what: str = "payload") -> dict[str, Any]:
    """A JSON object of at most 64 KiB serialized and depth 32; InvalidPayload otherwise."""
    if not isinstance(value, dict):
        raise InvalidPayload(
            f"{what} must be a JSON object, not {type(value).__name__}", {"field": what}
        )
    depth = payload_depth(value)
    if depth > MAX_PAYLOAD_DEPTH:
        raise InvalidPayload(
            f"{what} is nested deeper than {MAX_PAYLOAD_DEPTH} levels", {"field": what}
        )
    try:
        encoded = json.dumps(value, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as error:
        raise InvalidPayload(f"{what} is not JSON: {error}", {"field": what}) from error
    # A lone surrogate stays raw in `encoded` (ensure_ascii=False) and fails to encode;
    # NUL is written as the escape `\u0000`, which PostgreSQL's jsonb refuses.
    if not storable_text(encoded) or _JSON_NUL.search(encoded):
        raise InvalidPayload(
            f"{what} holds text that cannot be stored: a lone UTF-16 surrogate or NUL",
            {"field": what},
        )
    size = len(encoded.encode())
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidPayload(
            f"{what} is {size} bytes serialized; the limit is {MAX_PAYLOAD_BYTES}",
            {"field": what, "size": size, "limit": MAX_PAYLOAD_BYTES},
        )
    return value


def validate_schema(schema: object, what: str = "schema") -> dict[str, Any]:
    """A JSON Schema document (itself valid against its metaschema)."""
    if not isinstance(schema, dict):
        raise InvalidRequest(f"{what} must be a JSON Schema object", {"field": what})
    validate_payload(schema, what)
    try:
        validator_for(schema).check_schema(schema)
    except SchemaError as error:
        raise InvalidRequest(
            f"{what} is not a valid JSON Schema: {error.message}", {"field": what}
        ) from error
    return schema


def validate_against_schema(
    payload: dict[str, Any], schema: dict[str, Any] | None, what: str = "payload"
) -> None:
    """InvalidPayload when `payload` breaks the job's schema (all violations listed)."""
    if schema is None:
        return
    validator = validator_for(schema)(schema, format_checker=jsonschema.FormatChecker())
    problems = sorted(
        validator.iter_errors(payload), key=lambda error: [str(p) for p in error.absolute_path]
    )
    if problems:
        listed = [
            f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
            for error in problems
        ]
        raise InvalidPayload(
            f"{what} does not match the job's schema: {'; '.join(listed)}",
            {"field": what, "problems": listed},
        )


def validate_zone(name: object) -> str:
    """A known IANA zone name; UnknownZone otherwise."""
    from cronplane.errors import UnknownZone

    if not isinstance(name, str) or not name or len(name) > 64 or not storable_text(name):
        raise UnknownZone(f"time zone {ascii(name)[:80]} is unknown", {"field": "timezone"})
    cron_engine.known_zone(name)
    return name


def cron_rejected(text: str, error: ScheduleSyntax, *, parser_detail: bool = False) -> CronRejected:
    """The service's answer to a parser rejection: X400001CRNINV quoting `text` (SPEC §3, §9).

    The one place a `ScheduleSyntax` becomes `CronRejected`; raise what it
    returns, `from error`. `parser_detail` keeps the parser's own detail (the
    bad field's name in `field`), as `cron/explain` has always answered; a
    create or an edit names the request's `cron` field instead.
    """
    detail: dict[str, Any] = {"field": "cron", "cron": text}
    if parser_detail:
        detail.update(error.detail)
    # The parser's message quotes the input too; say it once: the field and the reason.
    field, reason = error.detail.get("field"), error.detail.get("reason")
    said = f"{field}: {reason}" if field and reason else error.message
    return CronRejected(f"cron {text!r} rejected: {said}", detail)


def _seconds(count: int) -> str:
    return f"{count} second{'s' if count != 1 else ''}"


def check_min_interval(cron: cron_engine.Cron, minimum: int) -> cron_engine.Cron:
    """`cron` when it never fires more often than every `minimum` seconds; IntervalTooShort
    (naming the minimum) otherwise.

    An exact interval is judged by its period; a 5-field cron by its shortest
    gap on the wall clock (`Cron.shortest_gap`), so every cron passes a
    minimum of 60 s or less. The minimum is the platform's setting (default 1).
    """
    if isinstance(minimum, bool) or not isinstance(minimum, int) or minimum < 1:
        raise ValueError(f"the minimum interval must be whole seconds >= 1, not {minimum!r}")
    gap = cron.shortest_gap
    if gap >= minimum:
        return cron
    fires = (
        f"fires every {_seconds(gap)}"
        if cron.interval_seconds is not None
        else f"can fire {_seconds(gap)} apart"
    )
    raise IntervalTooShort(
        f"cron {cron.normalized!r} {fires}; "
        f"the minimum interval on this installation is {_seconds(minimum)}",
        {"field": "cron", "cron": cron.normalized, "interval": gap, "minimum": minimum},
    )


def normalize_cron(text: object, seed: str) -> str:
    """The normalized form of a schedule expression, `H` resolved with `seed`.

    The parser's ScheduleSyntax surfaces as CronRejected (`cron_rejected`).
    """
    if not isinstance(text, str):
        raise CronRejected(f"cron must be a string, not {type(text).__name__}", {"field": "cron"})
    if len(text) > MAX_CRON_LENGTH:
        raise CronRejected(
            f"cron {text[:40]!r}... is longer than {MAX_CRON_LENGTH} characters",
            {"field": "cron"},
        )
    try:
        return cron_engine.parse(text, seed=seed).normalized
    except ScheduleSyntax as error:
        raise cron_rejected(text, error) from error


C = TypeVar("C", bound=str)


def one_of(
    value: object,
    choices: Sequence[C],
    field: str,
    error: type[CronplaneError] = InvalidRequest,
) -> C:
    """`value` when it is one of `choices` (as the choice itself); `error` (InvalidRequest)
    naming `field` and the choices otherwise."""
    for choice in choices:
        if value == choice:
            return choice
    raise error(
        f"{field} {value!r}"[:80] + f" is invalid: use one of {', '.join(choices)}",
        {"field": field},
    )


def validate_overlap(value: object) -> Overlap:
    """`skip`, `allow`, `buffer_one` or `cancel_running`."""
    return one_of(value, OVERLAPS, "overlap")


def validate_run_options(options: dict[str, Any]) -> None:
    """A job's run controls: `options.timeout` (seconds > 0, a fraction allowed: webhook jobs
    use them), `options.max_concurrency` (>= 1)."""
    timeout = options.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 0 < timeout <= MAX_TIMEOUT
    ):
        raise InvalidRequest(
            f"options.timeout {timeout!r} is invalid: seconds in (0, {MAX_TIMEOUT}]",
            {"field": "options.timeout"},
        )
    limit = options.get("max_concurrency")
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_CONCURRENCY
    ):
        raise InvalidRequest(
            f"options.max_concurrency {limit!r} is invalid: a whole number in 1..{MAX_CONCURRENCY}",
            {"field": "options.max_concurrency"},
        )


def validate_title(value: object) -> str:
    """A job title: a string of at most 200 storable characters."""
    if not isinstance(value, str) or len(value) > MAX_TITLE_LENGTH or not storable_text(value):
        raise InvalidRequest(
            f"title must be a string of at most {MAX_TITLE_LENGTH} characters", {"field": "title"}
        )
    return value


def is_sealed(value: object) -> bool:
    """Whether `value` has the shape of `cronplane webhook seal`'s output: `sealed:v1:` and
    a Fernet token (the key is not needed to tell, so any process can check it)."""
    if not isinstance(value, str) or not value.startswith(SEALED_PREFIX):
        return False
    token = value.removeprefix(SEALED_PREFIX)
    if _URLSAFE_BASE64.fullmatch(token) is None or len(token) % 4:
        return False
    raw = base64.urlsafe_b64decode(token)
    body = len(raw) - _FERNET_OVERHEAD
    return raw[:1] == b"\x80" and body >= _FERNET_BLOCK and body % _FERNET_BLOCK == 0


def validate_secret_option(options: dict[str, Any]) -> None:
    """A webhook job's `options.secret`: absent (the derived secret) or sealed, never clear."""
    if options.get("secret") is not None and not is_sealed(options["secret"]):
        raise InvalidRequest(
            "options.secret must be sealed (cronplane webhook seal), or left out to sign "
            "with the derived secret: a secret in clear is never stored",
            {"field": "options.secret"},
        )


def public_options(options: dict[str, Any]) -> dict[str, Any]:
    """A job's options as any reader may see them: the `secret` value redacted."""
    if "secret" not in options:
        return options
    return {**options, "secret": REDACTED}


def validate_enabled(value: object) -> bool:
    """A schedule's enabled flag: a real boolean, not a truthy value."""
    if not isinstance(value, bool):
        raise InvalidRequest("enabled must be true or false", {"field": "enabled"})
    return value
