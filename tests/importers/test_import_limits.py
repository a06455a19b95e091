"""Any input to an importer or the manifest loader: a result or a coded error, within
1 s and 100 MB (issue 33); and names made unique in linear time."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cronplane.errors import CronplaneError
from cronplane.importers import crontab, kubernetes
from cronplane.importers.translation import MAX_NAME, Names
from cronplane.manifest import load_manifest, parse_manifest

YAML_PIECES = st.sampled_from(
    [
        "[",
        "]",
        "{",
        "}",
        ": ",
        "- ",
        "\n",
        "  ",
        "&a ",
        "*a",
        "&b ",
        "*b",
        "<<: ",
        "---\n",
        "kind: CronJob\n",
        "apiVersion: batch/v1\n",
        "spec:\n",
        "schedule: '*/5 * * * *'\n",
        "name: x\n",
        "crons:\n",
        "jobs:\n",
        "!!int ",
        "!!set ",
        "? ",
        "9" * 120,
        "2024-02-30",
        "0x1F",
        "1:20:30",
        "~",
        "'",
        '"',
        "#",
        ",",
        "%YAML 1.1\n",
        "!!python/name:os.system",
    ]
)
YAMLISH = st.lists(YAML_PIECES, max_size=60).map("".join)
ANY_TEXT = st.one_of(st.text(max_size=400), YAMLISH)


def within_bounds(call: Callable[[], Any]) -> None:
    """`call()` returns or raises a CronplaneError, in < 1 s and < 100 MB (tracemalloc)."""
    tracemalloc.start()
    started = time.perf_counter()
    try:
        call()
    except CronplaneError:
        pass
    finally:
        elapsed = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert elapsed < 1.0, elapsed
    assert peak < 100_000_000, peak


SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@SETTINGS
@given(ANY_TEXT)
def test_any_text_to_the_manifest_loader(text: str) -> None:
    within_bounds(lambda: parse_manifest(text))


@SETTINGS
@given(st.one_of(ANY_TEXT.map(str.encode), st.binary(max_size=400)))
def test_any_file_to_import_kubernetes(tmp_path: Path, data: bytes) -> None:
    source = tmp_path / "cronjobs.yaml"
    source.write_bytes(data)

    def run() -> None:
        translation = kubernetes.translate(kubernetes.read_documents(source)[0], stack="k")
        translation.to_yaml(str(source))

    within_bounds(run)


@SETTINGS
@given(st.one_of(ANY_TEXT.map(str.encode), st.binary(max_size=400)))
def test_any_file_to_app_install_and_import_crontab(tmp_path: Path, data: bytes) -> None:
    source = tmp_path / "input"
    source.write_bytes(data)
    within_bounds(lambda: load_manifest(source))

    def run() -> None:
        crontab.translate(crontab.read_text(source), stack="c").to_yaml()

    within_bounds(run)


@pytest.mark.parametrize("lines", [1, 10_000])
def test_a_crontab_of_lines_named_alike_is_linear(lines: int) -> None:
    text = "*/5 * * * * /usr/local/bin/job.sh\n" * lines
    translation = crontab.translate(text, stack="c")
    assert len(translation.document["crons"]) == lines


@given(st.lists(st.sampled_from(["a", "a-2", "a-2-2", "b", "x" * 64, "x" * 63 + "y"]), max_size=40))
def test_claimed_names_are_distinct_cronplane_names(names: list[str]) -> None:
    given_names = Names()
    claimed = [given_names.claim(name) for name in names]
    assert len(set(claimed)) == len(claimed)
    assert all(len(name) <= MAX_NAME for name in claimed)
    first_of_each = {name: claimed[names.index(name)] for name in names}
    assert all(first_of_each[name] == name for name in names if names.index(name) == 0)


def test_names_count_on_from_the_last_suffix() -> None:
    names = Names()
    assert [names.claim("a") for _ in range(4)] == ["a", "a-2", "a-3", "a-4"]
    assert names.claim("a-3") == "a-3-2"
    long = "x" * MAX_NAME
    claimed = [names.claim(long) for _ in range(11)]
    assert claimed[1] == "x" * 62 + "-2" and claimed[9] == "x" * 61 + "-10"
