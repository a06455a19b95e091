"""`python:module:function` — a callable run in the worker's process.

The function is called as ``function(payload, context)``; `context` is a
:class:`~cronplane.targets.RunContext` (tenant, stack, environment, schedule,
scheduled_for, attempt, …). Modules are imported on first use and each
resolved function is cached by the target; the function may be a dotted attribute path
(``module:Class.method``).

Only modules the installation allows may be reached (CRONPLANE_PYTHON_TARGETS,
core.python_targets): the module named, every module the attribute path walks
through, and the module the resolved callable was defined in
(``python:allowed:os.system``, where `allowed` imported `os`, is refused). A
refusal is :class:`PythonTargetRefused`: the item fails at once, the function
never called.
"""

from __future__ import annotations

import importlib
import types
from collections.abc import Callable
from typing import Any

from cronplane.core import python_targets
from cronplane.errors import PythonTargetForbidden
from cronplane.settings import python_target_prefixes
from cronplane.targets import PermanentFailure, RunContext


class PythonTargetRefused(PermanentFailure, PythonTargetForbidden):
    """A `python:` target outside the allowed modules, met in the worker: fail, never call."""


def refused(error: PythonTargetForbidden) -> PythonTargetRefused:
    """The worker's form of a refusal (a permanent failure, so the item is not retried)."""
    return PythonTargetRefused(error.message, error.detail)


def load_callable(spec: str, allowed: tuple[str, ...] | None = None) -> Callable[..., Any]:
    """Import `module:attr.path` if `allowed` (module prefixes; None: the
    CRONPLANE_PYTHON_TARGETS setting) lets it reach it; ValueError when malformed,
    PythonTargetRefused outside the allowed modules, ImportError/AttributeError else."""
    prefixes = python_target_prefixes() if allowed is None else allowed
    target = f"{python_targets.PYTHON_KIND}:{spec}"
    module_name, sep, attr_path = spec.partition(":")
    if not sep or not module_name or not attr_path:
        raise ValueError(f"python target {spec!r} is not 'module:function'")
    try:
        # Before the import: importing a module already runs its code.
        python_targets.check_target(target, prefixes)
    except PythonTargetForbidden as error:
        raise refused(error) from None
    found: Any = importlib.import_module(module_name)
    for part in attr_path.split("."):
        found = getattr(found, part)
        _check_reached(target, found, prefixes)
    if not callable(found):
        raise TypeError(f"python target {spec!r} is not callable")
    function: Callable[..., Any] = found
    return function


def _check_reached(target: str, found: Any, prefixes: tuple[str, ...]) -> None:
    """Refuse a step of the walk that leaves the allowed modules: a module object outside
    them, or an object defined outside them (its `__module__`; none known: refused)."""
    if isinstance(found, types.ModuleType):
        module = found.__name__
    else:
        module = getattr(found, "__module__", None) or "<unknown>"
    if not python_targets.module_allowed(module, prefixes):
        raise refused(python_targets.refusal(target, module, prefixes))


class PythonTarget:
    """Runs `python:` targets by calling the function with (payload, context).

    Each spec is resolved once and its callable kept (a worker runs the same
    few targets thousands of times); a spec that fails to resolve is not
    kept, so a module deployed later is found on the next attempt.
    """

    def __init__(self, allowed: tuple[str, ...] | None = None) -> None:
        # The allowed module prefixes: None reads CRONPLANE_PYTHON_TARGETS now.
        self.allowed = python_target_prefixes() if allowed is None else allowed
        self._resolved: dict[str, Callable[..., Any]] = {}

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Call the target; its return value is the item's result."""
        function = self._resolved.get(spec)
        if function is None:
            function = self._resolved[spec] = load_callable(spec, self.allowed)
        return function(payload, context)
