"""An alert rule's checks: what a rule may say, normalized, or InvalidAlertRule naming
the field (the service and the CLI run the same checks)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from cronplane.core.alerts import (
    MAX_CHANNELS_PER_RULE,
    MAX_THRESHOLD,
    MIN_RENOTIFY,
    SKIP_REASONS,
    TIMED,
    Condition,
    RuleSpec,
    ScopeKind,
    paused_limit,
)
from cronplane.core.selectors import parse_selector
from cronplane.errors import InvalidAlertRule, InvalidRequest


def check_rule(spec: RuleSpec) -> RuleSpec:
    """The spec normalized; InvalidAlertRule (naming the field) when it cannot be stored."""

    def bad(message: str, name: str) -> InvalidAlertRule:
        return InvalidAlertRule(f"alert rule {spec.name!r}: {message}", {"field": name})

    if spec.condition not in {c.value for c in Condition}:
        choices = ", ".join(c.value for c in Condition)
        raise bad(f"condition must be one of {choices}, not {spec.condition!r}", "condition")
    if spec.scope not in {s.value for s in ScopeKind}:
        choices = ", ".join(s.value for s in ScopeKind)
        raise bad(f"scope must be one of {choices}, not {spec.scope!r}", "scope")
    if spec.scope in (ScopeKind.SCHEDULE, ScopeKind.JOB):
        missing = [n for n in ("stack", "environment", "target") if getattr(spec, n) is None]
        if missing:
            raise bad(f"a {spec.scope} rule needs {', '.join(missing)}", missing[0])
    elif spec.scope == ScopeKind.STACK:
        if spec.stack is None:
            raise bad("a stack rule needs stack", "stack")
        if spec.target is not None:
            raise bad("a stack rule names no target", "target")
    elif spec.stack is not None or spec.environment is not None or spec.target is not None:
        raise bad(f"a {spec.scope} rule names no stack, environment or target", "scope")
    spec = _check_selector(spec, bad)
    timed = spec.condition in TIMED or paused_limit(spec)
    if paused_limit(spec) and set(spec.reasons) != {"paused"}:
        message = "skipped takes a threshold only with the one reason paused"
        raise bad(f"{message} (paused for more than N seconds)", "threshold")
    if timed and (
        isinstance(spec.threshold, bool)
        or not isinstance(spec.threshold, int)
        or not 1 <= spec.threshold <= MAX_THRESHOLD
    ):
        raise bad(f"{spec.condition} needs a threshold of 1..{MAX_THRESHOLD} seconds", "threshold")
    if not timed and spec.threshold is not None:
        raise bad(f"{spec.condition} takes no threshold", "threshold")
    unknown = [r for r in spec.reasons if r not in SKIP_REASONS]
    if unknown:
        raise bad(
            f"unknown skip reason {unknown[0]!r} (one of {', '.join(SKIP_REASONS)})", "reasons"
        )
    if spec.reasons and spec.condition != Condition.SKIPPED:
        raise bad("only a skipped rule takes reasons", "reasons")
    if not 1 <= len(spec.channels) <= MAX_CHANNELS_PER_RULE:
        raise bad(f"name 1..{MAX_CHANNELS_PER_RULE} channels", "channels")
    if len(set(spec.channels)) != len(spec.channels):
        raise bad("a channel is named twice", "channels")
    if (
        isinstance(spec.renotify, bool)
        or not isinstance(spec.renotify, int)
        or not MIN_RENOTIFY <= spec.renotify <= MAX_THRESHOLD
    ):
        raise bad(f"renotify must be {MIN_RENOTIFY}..{MAX_THRESHOLD} seconds", "renotify")
    return replace(spec, reasons=tuple(sorted(set(spec.reasons))))


def _check_selector(spec: RuleSpec, bad: Callable[[str, str], InvalidAlertRule]) -> RuleSpec:
    """A selector rule's selector parsed and made canonical; refused when it does not
    parse, selects every schedule (that is a tenant rule) or comes without the scope."""
    if spec.scope != ScopeKind.SELECTOR:
        if spec.selector is not None:
            raise bad("only a selector rule takes a selector", "selector")
        return spec
    if not isinstance(spec.selector, str) or not spec.selector.strip():
        raise bad("a selector rule needs a selector (e.g. team=payments)", "selector")
    try:
        parsed = parse_selector(spec.selector)
    except InvalidRequest as refused:
        raise InvalidAlertRule(
            f"alert rule {spec.name!r}: {refused.message}", {**refused.detail, "field": "selector"}
        ) from None
    return replace(spec, selector=str(parsed))
