"""The CLI's exit codes, one per error class (documented in docs/cli.md); the error tree
(cronplane.errors) maps each error to one."""

from __future__ import annotations

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
EXIT_NOT_FOUND = 3
EXIT_CONFLICT = 4
EXIT_STALE = 5
EXIT_AUTH = 6
EXIT_UNAVAILABLE = 7
# 8 is `schedule run --wait --timeout`'s "still waiting"; 9 every tenant quota refusal.
EXIT_QUOTA = 9


def exit_code_for_status(status: int) -> int:
    """The CLI exit code for an HTTP status: one per error class."""
    if status in (401, 403):
        return EXIT_AUTH
    if status == 404:
        return EXIT_NOT_FOUND
    if status == 409:
        return EXIT_CONFLICT
    if status == 412:
        return EXIT_STALE
    if status == 503:
        return EXIT_UNAVAILABLE
    if 400 <= status < 500:
        return EXIT_INVALID
    return EXIT_INTERNAL
