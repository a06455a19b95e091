"""Files given to `app install`/`app sync` and the importers, read up to one shared cap.

Reading stops at the cap plus one byte, so an oversized file (or an endless
one, like /dev/zero) costs at most 4 MiB of memory before the refusal.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from cronplane.errors import InputFileTooLarge, InvalidRequest

MAX_INPUT_BYTES: Final = 4 * 1024 * 1024


def read_input(path: Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The file's bytes; InputFileTooLarge over `limit`, OSError when unreadable."""
    with path.open("rb") as file:
        data = file.read(limit + 1)
    if len(data) > limit:
        raise InputFileTooLarge(
            f"{str(path)!r} is larger than {limit} bytes ({limit // (1024 * 1024)} MiB)",
            {"path": str(path), "limit": limit},
        )
    return data


def read_input_text(path: Path) -> str:
    """The file's text (undecodable bytes replaced); InvalidRequest naming the file when
    it cannot be read, InputFileTooLarge over the cap."""
    try:
        data = read_input(path)
    except OSError as error:
        raise InvalidRequest(
            f"cannot read {str(path)!r}: {error.strerror}", {"path": str(path)}
        ) from error
    return data.decode(errors="replace")
