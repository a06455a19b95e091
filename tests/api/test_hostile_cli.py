"""Hostile input through the installed `cronplane` command (issue 21): coded errors, exit 2.

Before the fix, a lone surrogate in `--payload` printed a UnicodeEncodeError
traceback, and a 2,000-deep manifest a RecursionError one (exit 1).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from cli_process import command

from hostile_support import billion_laughs


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.db'}",
        "CRONPLANE_TENANT": "acme",
        "CRONPLANE_ACTOR": "cli:test",
    }
    return subprocess.run(
        [command(), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )


def assert_refused(result: subprocess.CompletedProcess[str], code: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert code in result.stderr, result.stderr
    assert "Traceback" not in result.stderr, result.stderr


@pytest.mark.parametrize(
    "payload",
    ['{"a": "\\ud800"}', '{"\\udfff": 1}', '{"a": "\\u0000"}'],
    ids=["value", "key", "nul"],
)
def test_schedule_add_with_an_unstorable_payload_is_coded(tmp_path: Path, payload: str) -> None:
    assert run(tmp_path, "job", "add", "report", "--target", "python:m:f").returncode == 0
    added = run(
        tmp_path,
        "schedule",
        "add",
        "s1",
        "--job",
        "report",
        "--cron",
        "5 4 * * *",
        "--payload",
        payload,
    )
    assert_refused(added, "X400002PAYINV")
    (tmp_path / "payload.json").write_text(payload)
    added = run(
        tmp_path, "schedule", "add", "s1", "--job", "report", "--cron", "5 4 * * *",
        "--payload", "@payload.json",
    )  # fmt: skip
    assert_refused(added, "X400002PAYINV")
    assert "s1" not in run(tmp_path, "schedule", "ls").stdout


@pytest.mark.parametrize("text", ["[" * 2000, billion_laughs()], ids=["deep", "alias-bomb"])
def test_app_install_of_a_hostile_manifest_is_a_yaml_limit(tmp_path: Path, text: str) -> None:
    (tmp_path / "app.yaml").write_text(text)
    assert_refused(run(tmp_path, "app", "install", "app.yaml"), "X400340YAMLIM")


def test_dot_names_are_refused_by_the_cli(tmp_path: Path) -> None:
    assert_refused(run(tmp_path, "job", "add", "..", "--target", "python:m:f"), "X400005NAMINV")
    assert run(tmp_path, "job", "add", "report", "--target", "python:m:f").returncode == 0
    added = run(tmp_path, "schedule", "add", ".", "--job", "report", "--cron", "5 4 * * *")
    assert_refused(added, "X400005NAMINV")
