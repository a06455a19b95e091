"""A single-node etcd and a two-node Patroni cluster on 127.0.0.1, for patroni_failover.py.

Debian 12 packages: `apt-get install -y patroni etcd-server` (patroni 3.0.2,
etcd 3.4) beside PostgreSQL 15 (`/usr/lib/postgresql/15/bin`). PostgreSQL
refuses to run as root, so when this runs as root every etcd, Patroni and
postgres process is started as the `postgres` user with
`runuser -u postgres --` (its data directories are chowned to it); as any
other user they run as that user. Every process gets its own session
(process group), and :meth:`Cluster.stop` ends each group it started.

Settings that make the faults quick and the promise exact (bootstrap.dcs):
`loop_wait: 1` (Patroni's HA loop runs every second), `ttl: 20` (Patroni's
minimum: a leader that stops renewing loses the key after 20 s),
`primary_start_timeout: 0` (a primary whose postgres dies fails over to the
synchronous standby at once instead of restarting in place), `use_pg_rewind`
(the old primary rejoins as a replica without a fresh copy), and
`synchronous_mode` (on unless the script runs with --async).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg


def _children(parent: int) -> list[int]:
    """The pids whose parent is `parent` (/proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        with contextlib.suppress(OSError, IndexError, ValueError):
            # The field after the command's closing parenthesis: state, then ppid.
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == parent:
                found.append(int(entry.name))
    return found


PG_BIN = Path("/usr/lib/postgresql/15/bin")
SCOPE = "cronplane-failover"


def free_port() -> int:
    """A TCP port nothing listens on now (127.0.0.1)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def as_postgres(command: list[str]) -> list[str]:
    """`command` as the postgres user when we are root (postgres refuses root)."""
    if os.geteuid() != 0:
        return command
    return ["runuser", "-u", "postgres", "--", *command]


def missing_tools() -> list[str]:
    """What this machine lacks to run the cluster (empty: nothing)."""
    wanted = ["etcd", "patroni", "patronictl"] + (["runuser"] if os.geteuid() == 0 else [])
    lacking = [tool for tool in wanted if shutil.which(tool) is None]
    if not (PG_BIN / "postgres").exists():
        lacking.append(str(PG_BIN / "postgres"))
    return lacking


@dataclass
class Member:
    """One Patroni node: its name, PostgreSQL port, REST API port and files."""

    name: str
    pg_port: int
    api_port: int
    config: Path
    data_dir: Path

    def rest(self, path: str, timeout: float = 2.0) -> tuple[int, Any]:
        """GET the member's REST API: (status, JSON body or None); (0, None) when it does
        not answer."""
        url = f"http://127.0.0.1:{self.api_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as error:
            with contextlib.suppress(ValueError):
                return error.code, json.loads(error.read() or b"null")
            return error.code, None
        except (OSError, ValueError):
            return 0, None

    def postmaster_pid(self) -> int | None:
        """The postmaster's pid (postmaster.pid's first line), None when it is not running."""
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None


class Cluster:
    """etcd + two Patroni members in `root`; `sync`: synchronous_mode."""

    def __init__(self, root: Path, *, sync: bool) -> None:
        self.root = root
        self.sync = sync
        self.etcd_port, self.etcd_peer = free_port(), free_port()
        self.members = [
            Member(name, free_port(), free_port(), root / f"{name}.yml", root / name)
            for name in ("pg-a", "pg-b")
        ]
        self.processes: list[subprocess.Popen[bytes]] = []

    # -- start and stop --------------------------------------------------------

    def start(self, timeout: float = 120) -> None:
        """etcd, then the first member (bootstraps, primary), then the second (clones)."""
        self.root.mkdir(parents=True, exist_ok=True)
        for member in self.members:
            member.config.write_text(json.dumps(self._config(member), indent=2))
        if os.geteuid() == 0:
            subprocess.run(["chown", "-R", "postgres:postgres", str(self.root)], check=True)
        etcd = self.root / "etcd"
        self._spawn(
            "etcd",
            [
                "etcd",
                "--name=failover",
                f"--data-dir={etcd}",
                f"--listen-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--advertise-client-urls=http://127.0.0.1:{self.etcd_port}",
                f"--listen-peer-urls=http://127.0.0.1:{self.etcd_peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{self.etcd_peer}",
                f"--initial-cluster=failover=http://127.0.0.1:{self.etcd_peer}",
            ],
        )
        first, second = self.members
        self._spawn(first.name, ["patroni", str(first.config)])
        self.wait(lambda: first.rest("/primary")[0] == 200, timeout, "the first primary")
        self._spawn(second.name, ["patroni", str(second.config)])
        self.wait_healthy(timeout)

    def _spawn(self, name: str, command: list[str]) -> None:
        log = (self.root / f"{name}.log").open("ab")
        self.processes.append(
            subprocess.Popen(
                as_postgres(command), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        )
        log.close()

    def stop(self) -> None:
        """Stop Patroni (it stops its postgres), then etcd; KILL what lingers."""
        for process in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        for member in self.members:  # a postgres that outlived its Patroni
            pid = member.postmaster_pid()
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self.processes.clear()

    # -- state -------------------------------------------------------------------

    def leader(self) -> Member | None:
        """The member whose REST API says it is the read-write primary."""
        for member in self.members:
            if member.rest("/primary")[0] == 200:
                return member
        return None

    def leader_name(self) -> str | None:
        leader = self.leader()
        return None if leader is None else leader.name

    def healthy(self) -> bool:
        """A primary, and the other member streaming from it with no lag (in sync mode: as
        the synchronous standby)."""
        status, body = self.members[0].rest("/cluster")
        if status != 200 or not isinstance(body, dict):
            status, body = self.members[1].rest("/cluster")
        if status != 200 or not isinstance(body, dict):
            return False
        roles = {m.get("role"): m for m in body.get("members", [])}
        standby = roles.get("sync_standby" if self.sync else "replica")
        if "leader" not in roles or standby is None or standby.get("state") != "running":
            return False
        return standby.get("lag") in (0, "0") and self.leader() is not None

    def wait_healthy(self, timeout: float = 120) -> float:
        """Seconds until :meth:`healthy` (RuntimeError past `timeout`)."""
        return self.wait(self.healthy, timeout, "a healthy cluster")

    def wait(self, done: Any, timeout: float, what: str) -> float:
        started = time.monotonic()
        while not done():
            if time.monotonic() - started > timeout:
                raise RuntimeError(f"no {what} after {timeout:.0f} s (logs in {self.root})")
            time.sleep(0.2)
        return time.monotonic() - started

    # -- faults ------------------------------------------------------------------

    def switchover(self) -> tuple[str, str]:
        """`patronictl switchover` from the leader to the other member: (from, to)."""
        leader = self.leader()
        assert leader is not None, "no leader to switch over from"
        candidate = next(m for m in self.members if m is not leader)
        subprocess.run(
            [
                "patronictl",
                "-c",
                str(leader.config),
                "switchover",
                "--leader",
                leader.name,
                "--candidate",
                candidate.name,
                "--force",
                SCOPE,
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        return leader.name, candidate.name

    def stall_replication(self) -> list[int]:
        """SIGSTOP the primary's WAL senders: from now on the standby receives nothing (a
        standby falling behind, as a busy network or disk makes it). The pids stopped."""
        leader = self.leader()
        assert leader is not None, "no primary"
        dsn = f"host=127.0.0.1 port={leader.pg_port} user=postgres dbname=postgres"
        with psycopg.connect(dsn, autocommit=True, connect_timeout=3) as conn:
            pids = [int(row[0]) for row in conn.execute("SELECT pid FROM pg_stat_replication")]
        for pid in pids:
            os.kill(pid, signal.SIGSTOP)
        return pids

    def kill_primary(self) -> tuple[str, int]:
        """SIGKILL the primary's postmaster and every process it started, at once (a crash:
        no backend or WAL sender outlives it to finish anything). Patroni fails over at
        once (primary_start_timeout 0)."""
        leader = self.leader()
        assert leader is not None, "no primary to kill"
        pid = leader.postmaster_pid()
        assert pid is not None, f"{leader.name} has no postmaster.pid"
        children = _children(pid)
        os.kill(pid, signal.SIGKILL)
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        return leader.name, pid

    # -- configuration ---------------------------------------------------------

    def _config(self, member: Member) -> dict[str, Any]:
        # JSON is YAML: Patroni reads this file as its YAML configuration.
        return {
            "scope": SCOPE,
            "name": member.name,
            "restapi": {
                "listen": f"127.0.0.1:{member.api_port}",
                "connect_address": f"127.0.0.1:{member.api_port}",
            },
            "etcd3": {"hosts": [f"127.0.0.1:{self.etcd_port}"]},
            "bootstrap": {
                "dcs": {
                    "ttl": 20,
                    "loop_wait": 1,
                    "retry_timeout": 5,
                    "maximum_lag_on_failover": 16 * 1024 * 1024,
                    "primary_start_timeout": 0,
                    "synchronous_mode": self.sync,
                    "postgresql": {
                        "use_pg_rewind": True,
                        "use_slots": True,
                        "parameters": {
                            "max_connections": 200,
                            "wal_log_hints": "on",
                            "wal_keep_size": "512MB",
                        },
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"locale": "C.UTF-8"}],
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "host replication all 127.0.0.1/32 trust",
                ],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{member.pg_port}",
                "connect_address": f"127.0.0.1:{member.pg_port}",
                "data_dir": str(member.data_dir),
                "bin_dir": str(PG_BIN),
                "pgpass": str(self.root / f"{member.name}.pgpass"),
                "authentication": {
                    "superuser": {"username": "postgres", "password": "postgres"},
                    "replication": {"username": "replicator", "password": "replicator"},
                    "rewind": {"username": "postgres", "password": "postgres"},
                },
                "parameters": {"unix_socket_directories": str(self.root)},
            },
            "tags": {"nofailover": False, "noloadbalance": False, "clonefrom": False},
        }
