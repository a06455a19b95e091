"""`If-Match` and `ETag`: optimistic concurrency on a row's `revision`.

Responses carrying one row set `ETag: "<revision>"`; a write may send it back
as `If-Match` and is refused with 412 `X412001REVSTL` when the row changed
since. `If-Match` is optional (SPEC §2: updates *may* carry it); `*` means
"any revision".
"""

from __future__ import annotations

from typing import Annotated, Final

from fastapi import Header, Response
from pydantic import WithJsonSchema

from cronplane.errors import InvalidRequest

# What parse_if_match accepts (ASCII digits): `"3"`, `W/"3"`, `3` or `*`.
IF_MATCH_REGEX: Final = r'^(?:\*|(?:W/)?"?[0-9]{1,12}"?)$'


def parse_if_match(value: str | None) -> int | None:
    """The revision an `If-Match` header names; None when absent or `*`."""
    if value is None or value.strip() == "*":
        return None
    text = value.strip()
    if text.startswith("W/"):
        text = text[2:]
    text = text.strip('"')
    if not text.isdigit() or len(text) > 12:
        raise InvalidRequest(
            f"If-Match {value[:40]!r} is not a revision: send the ETag of the row",
            {"field": "If-Match"},
        )
    return int(text)


async def if_match(
    header: Annotated[
        str | None,
        # Described as a plain string (absent means "no check"; null is not a header value).
        WithJsonSchema({"type": "string", "maxLength": 64, "pattern": IF_MATCH_REGEX}),
        Header(
            alias="If-Match",
            max_length=64,
            description='The row\'s ETag (`"<revision>"`); a stale one is refused with 412.',
        ),
    ] = None,
) -> int | None:
    """FastAPI dependency: the expected revision, if the client sent one."""
    return parse_if_match(header)


def etag(revision: int) -> str:
    """The ETag of a row at `revision`."""
    return f'"{revision}"'


def set_etag(response: Response, revision: int) -> None:
    """Tag a one-row response with its revision."""
    response.headers["ETag"] = etag(revision)
