"""The README's tour, run as it is written, beside `make run`'s server (a claim is a promise)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from make_run_server import ROOT, make_run


def tour_commands() -> list[str]:
    """The shell lines of the README's "A tour" block, comments and blank lines dropped."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## A tour", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the README's tour has no sh block"
    lines = []
    for line in block.group(1).splitlines():
        command = re.sub(r"\s{2,}#.*$", "", line).strip()
        if command and not command.startswith("#"):
            lines.append(command)
    return lines


def test_every_command_of_the_readme_tour_succeeds_beside_make_run(tmp_path: Path) -> None:
    commands = tour_commands()
    assert any("schedule run" in command for command in commands)
    with make_run(tmp_path) as served:
        script = "\n".join(["set -euo pipefail", *(f"{c}\necho '<<ok>>'" for c in commands)])
        ran = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            env=served.env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        done = ran.stdout.count("<<ok>>")
        failed = commands[done] if done < len(commands) else None
        assert ran.returncode == 0, f"{failed!r} failed:\n{ran.stdout[-2000:]}\n{ran.stderr}"
        assert done == len(commands)
        assert "succeeded" in ran.stdout  # `schedule run nightly --wait` saw the outcome
