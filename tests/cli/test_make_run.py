"""`make run` as a new user runs it: where it listens, what it prints, what the token opens."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from make_run_server import stop_group

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_make_run_serves_where_asked_and_its_token_opens_the_example_app(tmp_path: Path) -> None:
    if shutil.which("make") is None:
        pytest.fail("make is part of the README's set-up and must be installed")
    venv = Path(sys.prefix)
    port = free_port()
    key_file = tmp_path / "var" / "secret-key"
    env = {
        **os.environ,
        "CRONPLANE_URL": "",
        "CRONPLANE_TOKEN": "",
        "CRONPLANE_SECRET_KEY": "",
        "CRONPLANE_SECRET_KEY_FILE": str(key_file),
    }
    command = [
        "make",
        "-s",
        "-C",
        str(ROOT),
        # The venv is the one running these tests: never reinstall it here.
        "-o",
        f"{venv}/.installed-stamp",
        "run",
        f"VENV={venv}",
        "HOST=127.0.0.1",
        f"PORT={port}",
        f"DB=sqlite:///{tmp_path / 'run.db'}",
    ]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("console:"):
                break
        printed = "".join(lines)
        found = re.search(r"console:\s+(http://\S+)\s+\(sign in with this token: (\S+)\)", printed)
        assert found, printed
        url, token = found.groups()
        # Keep reading the server's log so a full pipe never stalls it.
        threading.Thread(target=process.stdout.read, daemon=True).start()
        assert url == f"http://127.0.0.1:{port}/"

        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(url + "healthz", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "make run did not answer on the printed URL"
            time.sleep(0.2)

        # The README's console recipe: the printed token reaches the example app's rows.
        answer = httpx.get(
            url + "api/v1/tenants/default/schedules",
            params={"stack": "demo"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=5,
        )
        assert answer.status_code == 200, answer.text
        names = {row["name"] for row in answer.json()["items"]}
        assert names, "the example app's schedules are missing from the token's tenant"
        # A deployment key was made and kept (only its owner reads it), so webhook jobs
        # and alert channels work on the first run: a secret sealed with it opens.
        assert f"made a secret key in {key_file}" in printed
        assert key_file.stat().st_mode & 0o777 == 0o600
        key = key_file.read_text().strip()
        assert len(key) >= 32
        sealed = subprocess.run(
            [str(venv / "bin" / "cronplane"), "webhook", "seal", "--json"],
            input="s3cret\n",
            env={**env, "CRONPLANE_SECRET_KEY": key},
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(sealed.stdout)["sealed"].startswith("sealed:v1:")
    finally:
        stop_group(process)
