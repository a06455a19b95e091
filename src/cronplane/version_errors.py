"""The errors of schedule versions (issue 38): a piece of errors.py's split by noun.

::

    NotFound                             404 class, CLI exit 3
    ├── VersionNotFound                  X404380VERNFD  no such version of the row (or pruned)
    └── NothingToRestore                 X404381RSTNON  no deleted row of that name within the retention
    Conflict                             409 class, CLI exit 4
    ├── VersionJobGone                   X409380VERJOB  rollback to a version whose job no longer exists
    └── RestoreNameTaken                 X409381RSTDPL  restore of a name a live row holds

`cronplane.codes.render_markdown` imports this module with errors.py, so
docs/codes.md lists them.
"""

from __future__ import annotations

from cronplane.codes import declare
from cronplane.errors import Conflict, NotFound


class VersionNotFound(NotFound):
    """The row has no version with that number (never made, or pruned)."""

    code = declare("X404380VERNFD", "schedule version not found (never made, or pruned)", "error")


class NothingToRestore(NotFound):
    """No row of that name was deleted within the version retention."""

    code = declare(
        "X404381RSTNON",
        "nothing to restore: no schedule of that name was deleted within the version retention",
        "error",
    )


class VersionJobGone(Conflict):
    """A rollback to a version whose job no longer exists (or is inactive); nothing changes."""

    code = declare(
        "X409380VERJOB",
        "rollback refused: the job the version names no longer exists or is inactive",
        "error",
    )


class RestoreNameTaken(Conflict):
    """A restore of a name that a live row holds; nothing changes."""

    code = declare("X409381RSTDPL", "restore refused: a schedule with this name exists", "error")
