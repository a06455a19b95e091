"""Credentials in URLs, hidden from every reader: `user:pass@` and secret-looking query
(or fragment) parameters become `***`.

Applied where rows become what people and programs read (`Job.to_dict`,
`QueueItem.to_dict`, `Event.to_dict`, `Channel.to_dict`, the API's job schema, the
CLI's tables, the console's templates); the worker still reads the stored URL.
"""

from __future__ import annotations

import re
from typing import Any, Final
from urllib.parse import SplitResult, urlsplit, urlunsplit

MASK: Final = "***"
# Parameter names whose value is a credential: exact names, then parts of names.
SECRET_NAMES: Final = frozenset(
    {"token", "key", "secret", "password", "passwd", "pwd", "signature", "sig", "auth"}
)
SECRET_PARTS: Final = (
    "token",
    "secret",
    "password",
    "passwd",
    "api_key",
    "apikey",
    "access_key",
    "private_key",
    "signature",
    "credential",
)
URL: Final = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{1,15}://[^\s\"'<>`]+")


def secret_name(name: str) -> bool:
    """Whether a query parameter's name says its value is a credential."""
    lowered = name.lower().replace("-", "_")
    return lowered in SECRET_NAMES or any(part in lowered for part in SECRET_PARTS)


def _parameters(text: str) -> str:
    pieces = []
    for piece in text.split("&"):
        name, equals, _ = piece.partition("=")
        pieces.append(f"{name}={MASK}" if equals and secret_name(name) else piece)
    return "&".join(pieces)


def redact_url(url: str) -> str:
    """The URL with its user information and secret parameters masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{MASK}@{netloc.rpartition('@')[2]}"
    redacted = SplitResult(
        parts.scheme, netloc, parts.path, _parameters(parts.query), _parameters(parts.fragment)
    )
    return urlunsplit(redacted) if redacted != parts else url


def redact_text(text: str) -> str:
    """Every URL in a text redacted (error messages, targets such as `webhook:URL`)."""
    if "://" not in text:
        return text
    return URL.sub(lambda match: redact_url(match.group()), text)


def redact_value(value: Any) -> Any:
    """Every string inside a JSON-like value redacted (results, event details)."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {key: redact_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [redact_value(item) for item in value]
    return value
