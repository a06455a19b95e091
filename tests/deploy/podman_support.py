"""Podman for the deployment tests: the tools, the images build.sh makes, containers.

Every test here drives the real `podman` (and `mmdebstrap` for the base): no engine
is simulated. Locally a missing tool skips; under CI=true it fails
(required_services). The images are built once per session by deploy/image/build.sh,
which tags each by a hash of its inputs, so a second session reuses them.

This machine's sandbox needs podman settings a normal host does not (no
CAP_SYS_RESOURCE for rlimits, a cgroup layout crun refuses): CONTAINERS_CONF points at
tests/deploy/containers.conf unless the environment names another.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from required_services import require_service

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "deploy" / "image" / "build.sh"
CONTAINERS_CONF = Path(__file__).with_name("containers.conf")
os.environ.setdefault("CONTAINERS_CONF", str(CONTAINERS_CONF))


def tool(name: str) -> str:
    """A tool's path: the test environment's own (podman-compose is a PyPI package), else
    PATH's; skips (fails under CI) when there is none."""
    beside = Path(sys.executable).with_name(name)
    if beside.is_file():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        require_service(name, f"`{name}` is not on PATH")
    return found


def require_tools(*names: str) -> None:
    """Each tool on PATH (or in the test environment), or skip (fail under CI)."""
    for name in names:
        tool(name)


def podman(
    *args: str, check: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """Run `podman ARGS`, its output as text; raises with its stderr when it fails."""
    done = subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(args)} exited {done.returncode}: {done.stderr}")
    return done


@cache
def image(name: str = "cronplane") -> str:
    """The tag of an image deploy/image/build.sh makes (built once, reused by its hash)."""
    require_tools("podman", "mmdebstrap")
    started = time.monotonic()
    done = subprocess.run(
        ["bash", str(BUILD), name], capture_output=True, text=True, timeout=900, check=False
    )
    if done.returncode != 0:
        raise AssertionError(f"build.sh {name} exited {done.returncode}:\n{done.stderr[-4000:]}")
    tag = done.stdout.strip().splitlines()[-1]
    print(f"image {tag}: {time.monotonic() - started:.1f} s")  # shown with -s / in -rA
    return tag


@contextmanager
def container(name: str, args: Sequence[str]) -> Iterator[str]:
    """`podman run -d --name NAME ARGS`; removed (with its logs printed) on the way out."""
    podman("rm", "--force", "--ignore", name)
    podman("run", "--detach", "--name", name, *args)
    try:
        yield name
    finally:
        logs = podman("logs", name, check=False)
        print(f"--- logs of {name} ---\n{logs.stdout[-3000:]}{logs.stderr[-3000:]}")
        podman("rm", "--force", "--ignore", "--time", "0", name, check=False)


def inspect(name: str) -> dict[str, Any]:
    """`podman inspect NAME` (the first object)."""
    found: list[dict[str, Any]] = json.loads(podman("inspect", name).stdout)
    return found[0]


def wait_http(url: str, timeout: float = 60.0) -> dict[str, Any]:
    """GET `url` until it answers 200 with JSON; that JSON."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                body: dict[str, Any] = json.loads(response.read())
                return body
        except (urllib.error.URLError, ConnectionError, TimeoutError) as error:
            last = error
        time.sleep(0.3)
    raise AssertionError(f"{url} did not answer within {timeout:g} s: {last}")


def wait_for(what: str, check: Any, timeout: float = 60.0, every: float = 0.3) -> Any:
    """Call `check()` until it returns something truthy; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout:g} s")


def free_port() -> int:
    """A loopback TCP port nobody listens on now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port
