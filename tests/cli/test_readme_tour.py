"""The README's tour, run as it is written, beside `make run`'s server (a claim is a promise)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path

from cli_process import stop_group

ROOT = Path(__file__).resolve().parents[2]


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_every_command_of_the_readme_tour_succeeds_beside_make_run(tmp_path: Path) -> None:
    commands = tour_commands()
    assert any("schedule run" in command for command in commands)
    # The tour runs from a checkout: `.venv`, `examples/` and `var/` beside each other.
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "var").mkdir()
    env = {
        **os.environ,
        "CRONPLANE_URL": "",
        "CRONPLANE_TOKEN": "",
        "CRONPLANE_BIN": f"{sys.prefix}/bin",
        "CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'var' / 'cronplane.db'}",
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
    }
    server = subprocess.Popen(
        ["bash", str(ROOT / "examples" / "run.sh")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        assert server.stdout is not None
        started = []
        for line in server.stdout:
            started.append(line)
            if line.startswith("console:"):
                break
        assert started and started[-1].startswith("console:"), "".join(started)
        threading.Thread(target=server.stdout.read, daemon=True).start()

        shell_env = {key: value for key, value in env.items() if key != "CRONPLANE_DATABASE_URL"}
        script = "\n".join(["set -euo pipefail", *(f"{c}\necho '<<ok>>'" for c in commands)])
        ran = subprocess.run(
            ["bash", "-c", script],
            cwd=tmp_path,
            env=shell_env,
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
    finally:
        stop_group(server)
