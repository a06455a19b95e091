"""`python:module:function` — a callable run in the worker's process.

The function is called as ``function(payload, context)``; `context` is a
:class:`~cronplane.targets.RunContext` (tenant, stack, environment, schedule,
scheduled_for, attempt, …). Modules are imported on first use and each
resolved function is cached by the target; the function may be a dotted attribute path
(``module:Class.method``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from cronplane.targets import RunContext


def load_callable(spec: str) -> Callable[..., Any]:
    """Import `module:attr.path`; ValueError when malformed, ImportError/AttributeError else."""
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise ValueError(f"python target {spec!r} is not 'module:function'")
    found: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        found = getattr(found, part)
    if not callable(found):
        raise TypeError(f"python target {spec!r} is not callable")
    function: Callable[..., Any] = found
    return function


class PythonTarget:
    """Runs `python:` targets by calling the function with (payload, context).

    Each spec is resolved once and its callable kept (a worker runs the same
    few targets thousands of times); a spec that fails to resolve is not
    kept, so a module deployed later is found on the next attempt.
    """

    def __init__(self) -> None:
        self._resolved: dict[str, Callable[..., Any]] = {}

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Call the target; its return value is the item's result."""
        function = self._resolved.get(spec)
        if function is None:
            function = self._resolved[spec] = load_callable(spec)
        return function(payload, context)
