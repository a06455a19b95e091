"""`cronplane cron next|explain`: the edge over cronplane.core.cron."""

from __future__ import annotations

import subprocess
import sys

import pytest
from click.testing import CliRunner

from cronplane.cli.main import cli, main


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["cron", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_next_prints_utc_instants_one_a_line() -> None:
    out = _run(
        "next",
        "at 02:30",
        "--after",
        "2026-03-07T12:00:00Z",
        "--count",
        "3",
        "--tz",
        "America/New_York",
    )
    assert out.splitlines() == [
        "2026-03-08T07:00:00Z",
        "2026-03-09T06:30:00Z",
        "2026-03-10T06:30:00Z",
    ]


def test_next_defaults_to_five_from_now() -> None:
    lines = _run("next", "*/5 * * * *").splitlines()
    assert len(lines) == 5
    assert all(line.endswith("Z") and len(line) == 20 for line in lines)


def test_next_naive_after_is_wall_time_in_the_zone() -> None:
    out = _run(
        "next", "0 * * * *", "--after", "2026-01-01T00:00", "--count", "1", "--tz", "Asia/Kolkata"
    )
    assert out.splitlines() == ["2025-12-31T19:30:00Z"]  # 01:00 IST


def test_next_with_a_seed_resolves_h() -> None:
    first = _run("next", "H H * * *", "--seed", "billing/report", "--after", "2026-01-01T00:00:00Z")
    again = _run("next", "H H * * *", "--seed", "billing/report", "--after", "2026-01-01T00:00:00Z")
    assert first == again


def test_explain_shows_normal_form_description_and_both_clocks() -> None:
    out = _run(
        "explain", "every day at 01:30", "--tz", "Europe/London", "--after", "2026-10-24T12:00:00Z"
    )
    assert "normalized:  30 1 * * *" in out
    assert "description: At 01:30, every day" in out
    assert "fixed time" in out
    rows = [line for line in out.splitlines() if line.startswith("  ")]
    assert len(rows) == 5
    assert rows[0].split() == ["2026-10-25T01:30:00+01:00", "BST", "|", "2026-10-25T00:30:00Z"]
    assert rows[1].split() == ["2026-10-26T01:30:00+00:00", "GMT", "|", "2026-10-26T01:30:00Z"]


def test_explain_an_interval() -> None:
    out = _run("explain", "every 90 minutes", "--after", "2026-01-01T00:00:00Z")
    assert "normalized:  @every 90m" in out
    assert "exact interval" in out


def test_invalid_input_exits_2_with_the_code_on_stderr() -> None:
    # End to end once, as a user runs it.
    done = subprocess.run(
        [sys.executable, "-m", "cronplane", "cron", "next", "61 * * * *"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("X400003INVSCH: invalid schedule '61 * * * *': minute")


@pytest.mark.parametrize(
    ("args", "stderr_start"),
    [
        (["explain", "@daily", "--tz", "Mars/Olympus"], "X400004ZONINV"),
        (["next", "0 0 30 2 *"], "X400003INVSCH: invalid schedule '0 0 30 2 *': day-of-month"),
        (["next", "0 30 2 * * *"], "X400003INVSCH"),
        (["explain", "61 * * * *"], "X400001CRNINV: cron '61 * * * *' rejected: minute: '61'"),
        (["next", "@daily", "--after", "yesterday"], "Error: Invalid value for --after"),
    ],
)
def test_errors_through_main_exit_2(
    args: list[str],
    stderr_start: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(sys, "argv", ["cronplane", "cron", *args])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert stderr_start in captured.err.splitlines()[-1] or captured.err.startswith(stderr_start)
