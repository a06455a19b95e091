"""The code registry: well formed, unique, documented, and driving status and exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

import cronplane.errors as errors
import cronplane.events  # noqa: F401  (declares the event codes)
from cronplane.codes import CODE_PATTERN, REGISTRY, declare, parse_code, render_markdown

DOCS = Path(__file__).resolve().parents[1] / "docs" / "codes.md"


def _error_classes() -> list[type[errors.CronplaneError]]:
    found: list[type[errors.CronplaneError]] = []
    pending = list(errors.CronplaneError.__subclasses__())
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "code" in vars(cls):
            found.append(cls)
    return found


def test_every_code_is_well_formed_and_unique() -> None:
    assert REGISTRY, "the registry is empty"
    mnemonics = [code.mnemonic for code in REGISTRY.values()]
    assert len(mnemonics) == len(set(mnemonics))
    for text, code in REGISTRY.items():
        assert CODE_PATTERN.match(text), text
        assert code.status == int(text[1:4])
        if code.kind == "error":
            assert text.startswith("X") and code.status >= 400


def test_spec_codes_are_declared_with_their_meaning() -> None:
    for text in ("X400001CRNINV", "X400003INVSCH", "X404902SCHNFD", "X409900SCHDPL"):
        assert REGISTRY[text].kind == "error"
    for text in ("X200900SCHCAL", "V200610SCHTRG"):
        assert REGISTRY[text].kind == "event"


def test_each_error_class_declares_its_own_code() -> None:
    classes = _error_classes()
    codes = [cls.code.text for cls in classes]
    assert len(codes) == len(set(codes)), "two classes share a code"
    assert {c.text for c in REGISTRY.values() if c.kind == "error"} == set(codes)


@pytest.mark.parametrize(
    ("cls", "status", "exit_code"),
    [
        (errors.CronRejected, 400, 2),
        (errors.ScheduleNotFound, 404, 3),
        (errors.ScheduleExists, 409, 4),
        (errors.StaleRevision, 412, 5),
        (errors.Forbidden, 403, 6),
        (errors.Unavailable, 503, 7),
    ],
)
def test_status_body_and_exit_code_follow_from_the_code(
    cls: type[errors.CronplaneError], status: int, exit_code: int
) -> None:
    error = cls("it went wrong", {"field": "cron"})
    assert error.status == status
    assert error.exit_code == exit_code
    assert error.to_dict() == {
        "code": cls.code.text,
        "message": "it went wrong",
        "detail": {"field": "cron"},
    }


@pytest.mark.parametrize(
    "text", ["X40001CRNINV", "Y400001CRNINV", "X400001crninv", "X600001ABCDEF"]
)
def test_malformed_codes_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_code(text)


def test_a_repeated_code_is_refused() -> None:
    with pytest.raises(ValueError, match="twice"):
        declare("X400001CRNINV", "again", "error")


def test_docs_codes_md_is_generated_and_current() -> None:
    assert DOCS.read_text() == render_markdown(), "run `make docs` to regenerate docs/codes.md"
