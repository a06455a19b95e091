"""The CRONPLANE_PYTHON_TARGETS rule (core.python_targets): prefixes, defaults, refusals."""

from __future__ import annotations

import pytest

from cronplane.core.python_targets import (
    DEFAULT_PREFIXES,
    check_target,
    module_allowed,
    parse_prefixes,
)
from cronplane.errors import InvalidRequest, PythonTargetForbidden


def test_unset_is_the_example_app_and_empty_is_none() -> None:
    assert parse_prefixes(None) == DEFAULT_PREFIXES == ("demo_jobs",)
    assert parse_prefixes("") == parse_prefixes(" , ") == ()
    assert parse_prefixes(" app.jobs , billing ") == ("app.jobs", "billing")


@pytest.mark.parametrize("text", ["app jobs", "app.", "1x", "a-b", "app:f"])
def test_a_part_that_is_not_a_module_name_stops_the_process(text: str) -> None:
    with pytest.raises(InvalidRequest) as refused:
        parse_prefixes(text)
    assert refused.value.detail == {"field": "CRONPLANE_PYTHON_TARGETS"}


@pytest.mark.parametrize(
    ("module", "allowed"),
    [("foo", True), ("foo.bar", True), ("foo.bar.baz", True), ("foobar", False), ("fo", False)],
)
def test_a_prefix_allows_itself_and_below_never_a_longer_name(module: str, allowed: bool) -> None:
    assert module_allowed(module, ("foo",)) is allowed
    assert module_allowed(module, ()) is False


def test_check_target_judges_python_targets_only() -> None:
    check_target("python:foo.jobs:run", ("foo",))
    check_target("webhook:https://example.com/", ())  # other kinds: their own rules
    for target in ("python:pty:spawn", "python:foobar:f", "python:foo:f.__globals__"):
        with pytest.raises(PythonTargetForbidden) as refused:
            check_target(target, ("foo",))
        assert refused.value.code.text == "X403252PYDENY"
        assert refused.value.status == 403 and refused.value.exit_code == 6
        assert "CRONPLANE_PYTHON_TARGETS" in refused.value.message
