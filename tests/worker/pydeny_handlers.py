"""A job module for the CRONPLANE_PYTHON_TARGETS tests: it reaches another module two ways.

The tests allow only this module; `control_handlers` (imported here as a module and one of
its functions under a local name) stays outside, so a target that walks into it is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import control_handlers
from control_handlers import touch as borrowed_touch

from cronplane.targets import RunContext

__all__ = ["borrowed_touch", "control_handlers", "own_touch"]


def own_touch(payload: dict[str, Any], context: RunContext) -> None:
    """Append to the file named in the payload (this module's own function: allowed)."""
    with Path(payload["file"]).open("a") as out:
        out.write("ran\n")
