"""`make run`'s server, started as the README says, for tests that follow the docs as
written (the README's tour, the console walk-through in docs/console.md).

`examples/run.sh` runs from a temporary checkout-like directory (`.venv`, `examples/`
and `var/` beside each other) on a free loopback port; the console line it prints
gives the URL and the admin token it made.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSOLE_LINE = re.compile(r"^console:\s+(\S+)\s+\(sign in with this token: (\S+)\)")


@dataclass(frozen=True)
class MakeRun:
    """A running `make run`: where it serves, its admin token, and the shell's env."""

    url: str
    token: str
    env: dict[str, str]  # what the README's shell has (no database URL: it exports its own)
    home: Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop_group(process: subprocess.Popen[str]) -> None:
    """Ctrl-C a server started with start_new_session, KILL it after 15 s; close its pipe."""
    os.killpg(process.pid, signal.SIGINT)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    if process.stdout is not None:
        process.stdout.close()


def wait_listening(port: int, server: subprocess.Popen[str], within: float = 30.0) -> None:
    """Until the server accepts connections (run.sh prints its console line first)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        assert server.poll() is None, "the server exited"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"the server did not listen on {port} within {within} s")


@contextmanager
def make_run(home: Path) -> Iterator[MakeRun]:
    """Start `examples/run.sh` in `home`; stop it (and its workers) on the way out."""
    (home / ".venv").symlink_to(Path(sys.prefix))
    (home / "examples").symlink_to(ROOT / "examples")
    (home / "var").mkdir()
    env = {
        **os.environ,
        "CRONPLANE_URL": "",
        "CRONPLANE_TOKEN": "",
        "CRONPLANE_BIN": f"{sys.prefix}/bin",
        "CRONPLANE_DATABASE_URL": f"sqlite:///{home / 'var' / 'cronplane.db'}",
        "HOST": "127.0.0.1",
        "PORT": str(free_port()),
    }
    server = subprocess.Popen(
        ["bash", str(ROOT / "examples" / "run.sh")],
        cwd=home,
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
        found = CONSOLE_LINE.match(started[-1]) if started else None
        assert found, "".join(started)
        threading.Thread(target=server.stdout.read, daemon=True).start()
        wait_listening(int(env["PORT"]), server)
        shell_env = {key: value for key, value in env.items() if key != "CRONPLANE_DATABASE_URL"}
        yield MakeRun(found.group(1).rstrip("/"), found.group(2), shell_env, home)
    finally:
        stop_group(server)
