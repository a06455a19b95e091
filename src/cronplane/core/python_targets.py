"""Which modules a `python:` target may name (CRONPLANE_PYTHON_TARGETS). Pure.

A `python:module:attr.path` job makes the worker import `module` and call
what the path reaches, so a tenant who could name any module could make the
worker call anything importable (`python:pty:spawn`, `python:os:system`).
The installation lists the module *prefixes* it allows: a prefix `foo`
allows `foo` and `foo.bar`, never `foobar`.

- unset: :data:`DEFAULT_PREFIXES`, the example app's handlers (cronplane has
  no `python:` job module of its own: its internal jobs are `system:`);
- set to an empty string: no `python:` target at all;
- otherwise: comma-separated dotted module names.

The rule is judged twice: when a job is created or its target changed
(:func:`check_target`, by module name and the shape of the attribute path)
and in the worker before the call (targets.python), where the attribute path
is walked and every module it passes through, and the module the resolved
callable was defined in, must be allowed too — `python:allowed:os.system`
where `allowed` imported `os` is refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from cronplane.errors import InvalidRequest, PythonTargetForbidden

VARIABLE: Final = "CRONPLANE_PYTHON_TARGETS"
# The example app's handlers (examples/demo_jobs, which `make run` installs).
DEFAULT_PREFIXES: Final[tuple[str, ...]] = ("demo_jobs",)
PYTHON_KIND: Final = "python"


def parse_prefixes(text: str | None) -> tuple[str, ...]:
    """The allowed prefixes from the variable's text: None (unset) gives the defaults, an
    empty string none; InvalidRequest naming the variable for a part that is not a dotted
    module name, so a typo stops the process instead of allowing something else."""
    if text is None:
        return DEFAULT_PREFIXES
    prefixes: list[str] = []
    for part in text.split(","):
        name = part.strip()
        if not name:
            continue
        if not is_module_name(name):
            raise InvalidRequest(
                f"{VARIABLE} lists module prefixes separated by commas; {name[:60]!r} is not one",
                {"field": VARIABLE},
            )
        prefixes.append(name)
    return tuple(prefixes)


def is_module_name(name: str) -> bool:
    """True for a dotted name of Python identifiers (`a.b_c`)."""
    return all(part.isidentifier() for part in name.split("."))


def module_allowed(module: str, prefixes: Iterable[str]) -> bool:
    """True when `module` is one of `prefixes` or inside one (`foo` allows `foo.x`, not
    `foobar`)."""
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def refusal(target: str, module: str, prefixes: tuple[str, ...]) -> PythonTargetForbidden:
    """The coded refusal of `target`, naming the module and the setting."""
    allowed = ", ".join(prefixes) if prefixes else "none"
    return PythonTargetForbidden(
        f"python: target {target[:200]!r} reaches module {module[:120]!r}, which this "
        f"installation does not allow ({VARIABLE} allows: {allowed})",
        {"field": "target", "module": module[:120], "setting": VARIABLE},
    )


def check_target(target: str, prefixes: tuple[str, ...]) -> None:
    """Refuse a `python:` target (the whole `python:module:attr` text) whose module is not
    allowed, or whose attribute path names a dunder (`f.__globals__`: a way out of the
    module); any other target kind passes (its own rules judge it)."""
    kind, _, spec = target.partition(":")
    if kind != PYTHON_KIND:
        return
    module, _, attr_path = spec.partition(":")
    module = module.strip()
    if not module_allowed(module, prefixes):
        raise refusal(target, module, prefixes)
    if any(part.startswith("__") for part in attr_path.split(".")):
        raise PythonTargetForbidden(
            f"python: target {target[:200]!r} names a dunder attribute: a target is a plain "
            f"path to a function in a module {VARIABLE} allows",
            {"field": "target", "module": module[:120], "setting": VARIABLE},
        )
