"""Hostile manifests and values (issue 21): refused early, cheaply, with their codes."""

from __future__ import annotations

import re
import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cronplane.core import target_rules, validation
from cronplane.core.yaml_bounds import MAX_ALIASES as MAX_YAML_ALIASES
from cronplane.core.yaml_bounds import MAX_DEPTH as MAX_YAML_DEPTH
from cronplane.errors import (
    CronplaneError,
    InvalidName,
    InvalidPayload,
    InvalidRequest,
    InvalidTarget,
    YamlOverLimit,
)
from cronplane.manifest import InvalidManifest, parse_manifest
from cronplane.targets.webhook import SecretKeyring
from hostile_support import billion_laughs


def refused_cheaply(text: str) -> CronplaneError:
    """Parse `text`, expecting YamlOverLimit within 10 MB (the bomb: 116 MB) and 2 s (the
    bomb: 3.9 s; a coarse bound, as a loaded CI machine took 0.53 s for a refusal that
    takes ~0.1 s alone: the memory peak is the measure that tells).

    Timed and measured in two runs: tracemalloc slows the parse several times.
    """
    started = time.perf_counter()
    with pytest.raises(YamlOverLimit) as refused:
        parse_manifest(text)
    assert time.perf_counter() - started < 2.0
    tracemalloc.start()
    try:
        with pytest.raises(YamlOverLimit):
            parse_manifest(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10_000_000, peak
    return refused.value


@pytest.mark.parametrize(
    "text",
    [
        "[" * 2000,
        "{a: " * 2000,
        "- " * 2000,
        "a: " + "[" * 100_000,
        "\n".join(" " * (2 * level) + "- k:" for level in range(300)),
    ],
    ids=["flow-seq", "flow-map", "block-seq", "100k", "block-map"],
)
def test_deep_yaml_is_a_manifest_error_not_a_recursion_error(text: str) -> None:
    error = refused_cheaply(text)
    assert error.code.text == "X400340YAMLIM"
    assert f"deeper than {MAX_YAML_DEPTH}" in error.message
    assert error.detail["limit"] == "depth" and error.detail["line"] >= 1


def test_an_alias_bomb_is_refused_before_it_expands() -> None:
    error = refused_cheaply(billion_laughs())
    assert (error.detail["limit"], error.detail["line"]) == (
        "nodes",
        7,
    )  # l6, the first to pass 1,000,000


def test_many_aliases_and_recursive_aliases_are_refused() -> None:
    many = "a: &a 1\nb: [" + ", ".join(["*a"] * (MAX_YAML_ALIASES + 1)) + "]\n"
    assert refused_cheaply(many).detail["limit"] == "aliases"
    assert "contains it" in refused_cheaply("a: &a [*a]\n").message


def test_ordinary_anchors_and_merge_keys_still_load() -> None:
    text = """
name: shop
jobs:
  report: &job {target: "python:shop.jobs:report", payload: {size: 1}}
  other: {<<: *job, title: Other}
crons:
  nightly: {cron: "0 2 * * *", job: report}
  hourly: {cron: "0 * * * *", job: other}
"""
    manifest = parse_manifest(text)
    assert manifest.jobs["other"].target == "python:shop.jobs:report"
    assert manifest.jobs["other"].title == "Other"


@pytest.mark.parametrize("name", [".", ".."])
def test_dot_segments_are_not_names(name: str) -> None:
    with pytest.raises(InvalidName):
        validation.validate_name(name)
    with pytest.raises(InvalidManifest) as refused:
        parse_manifest(f"name: '{name}'\n")
    assert "X400005NAMINV" in refused.value.detail["problems"][0]


@given(st.from_regex(validation.NAME_PATTERN, fullmatch=True))
def test_every_name_the_pattern_allows_survives_a_url_path(name: str) -> None:
    assert validation.validate_name(name) == name
    assert name not in (".", "..") and "/" not in name and len(name) <= 64


@given(st.text(max_size=70))
def test_the_name_rule_is_the_old_one_minus_dot_segments(name: str) -> None:
    old = re.fullmatch(r"[A-Za-z0-9._-]{1,64}", name) is not None
    new = validation.NAME_PATTERN.fullmatch(name) is not None
    assert new == (old and name not in (".", ".."))


@settings(max_examples=300)
@given(st.from_regex(target_rules.TARGET_REGEX, fullmatch=True))
def test_every_target_the_document_describes_is_accepted(target: str) -> None:
    assert target_rules.validate_target(target) in (
        "python",
        "webhook",
        "celery",
        "temporal",
        "command",
        "container",
    )


@pytest.mark.parametrize("target", ["webhook:http://[", "webhook:http://x\ud800/", "webhook:a\x00"])
def test_odd_targets_are_refused_with_the_target_error(target: str) -> None:
    with pytest.raises(InvalidTarget):
        target_rules.validate_target(target)


@pytest.mark.parametrize(
    "payload",
    [{"a": "\ud800"}, {"\udc00": 1}, {"a": ["\x00"]}, {"a\x00": 1}],
)
def test_unstorable_payload_text_is_an_invalid_payload(payload: dict[str, object]) -> None:
    with pytest.raises(InvalidPayload):
        validation.validate_payload(payload)


def test_an_escaped_backslash_before_u0000_is_ordinary_text() -> None:
    assert validation.validate_payload({"a": "\\u0000"}) == {"a": "\\u0000"}


def test_only_sealed_secrets_pass() -> None:
    sealed = SecretKeyring(b"k" * 32).seal("their secret")
    assert validation.is_sealed(sealed)
    validation.validate_secret_option({"secret": sealed, "timeout": 3})
    validation.validate_secret_option({"secret_rotation": 2})
    for given_secret in ("plain", "sealed:v1:", "sealed:v1:abc", sealed[:-4], 7, sealed + "\n"):
        assert not validation.is_sealed(given_secret)
        with pytest.raises(InvalidRequest):
            validation.validate_secret_option({"secret": given_secret})
    assert validation.public_options({"secret": sealed, "timeout": 3}) == {
        "secret": validation.REDACTED,
        "timeout": 3,
    }
