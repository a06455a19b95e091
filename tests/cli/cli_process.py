"""Run the installed `cronplane` command in a subprocess, as a script would.

`cronplane` resolves through PATH (the venv's console script); PYTHONPATH is
passed on so the subprocess imports this checkout's source. CliRunner is not
used: it hides the exit code the real `main()` returns.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from allowed_modules import VALUE as ALLOWED_PYTHON_TARGETS


@dataclass
class Outcome:
    """One finished `cronplane` process."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> object:
        return json.loads(self.stdout)


Cronplane = Callable[..., Outcome]


def command() -> str:
    """The installed console script: the one beside this interpreter (make test runs
    .venv/bin/pytest without putting .venv/bin on PATH), else the one on PATH."""
    beside = Path(sys.executable).with_name("cronplane")
    if beside.exists():
        return str(beside)
    found = shutil.which("cronplane")
    assert found is not None, "the `cronplane` console script is not installed"
    return found


def run_cronplane(
    *args: str, env: Mapping[str, str | None], cwd: Path, timeout: float = 120
) -> Outcome:
    """`cronplane ARGS` with `env` laid over a clean CRONPLANE_* environment (but for the
    tests' allowed `python:` modules)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
    # The suite's receivers are on loopback (denied by default); `env` may override it.
    base["CRONPLANE_OUTBOUND_ALLOW"] = "127.0.0.1,::1"
    base["CRONPLANE_PYTHON_TARGETS"] = ALLOWED_PYTHON_TARGETS
    for key, value in env.items():
        if value is None:
            base.pop(key, None)
        else:
            base[key] = value
    done = subprocess.run(
        [command(), *args],
        env=base,
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


ROOT = Path(__file__).resolve().parents[2]


@contextmanager
def background(
    args: Sequence[str], cwd: Path, env: Mapping[str, str]
) -> Iterator[subprocess.Popen[str]]:
    """`cronplane ARGS` running in a session of its own until the block ends (then Ctrl-C),
    with `env` over a clean CRONPLANE_* environment and the tests' handler modules importable."""
    from make_run_server import stop_group

    base = {k: v for k, v in os.environ.items() if not k.startswith("CRONPLANE_")}
    base["CRONPLANE_PYTHON_TARGETS"] = ALLOWED_PYTHON_TARGETS
    base["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests" / "worker")])
    process = subprocess.Popen(
        [command(), *args],
        env={**base, **env},
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        yield process
    finally:
        stop_group(process)
