"""Plain PostgreSQL servers of a run's own: initdb and pg_ctl on 127.0.0.1, in a folder.

shard_chaos.py runs its shards on two of them, bench/shard_scaling_bench.py
times one and two (each pinned to a core). The binaries are the newest
/usr/lib/postgresql/<version>/bin (Debian's server package), else those on
PATH (/usr/local/bin). PostgreSQL refuses root, so as root the server runs as
the `postgres` user (patroni_cluster.as_postgres) and its folder is chowned to
it. Durability is off (fsync, full_page_writes, synchronous_commit): these
servers are thrown away, and what is measured is cronplane, not the disk.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
from patroni_cluster import as_postgres

TOOLS = ("initdb", "pg_ctl", "postgres")
# Throw-away servers: no flush to disk, and room for every node's pools.
SETTINGS: dict[str, str] = {
    "listen_addresses": "127.0.0.1",
    "fsync": "off",
    "full_page_writes": "off",
    "synchronous_commit": "off",
    "max_connections": "400",
    "shared_buffers": "256MB",
    "max_wal_size": "4GB",
    "log_min_messages": "warning",
}


def pg_bin() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres (newest version first); None: none."""
    candidates = sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda path: int(path.parent.name) if path.parent.name.isdigit() else 0,
        reverse=True,
    )
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    for folder in candidates:
        if all((folder / tool).exists() for tool in TOOLS):
            return folder
    return None


def missing() -> str | None:
    """Why servers cannot be started here (None: they can)."""
    if pg_bin() is None:
        return "PostgreSQL's server binaries (initdb, pg_ctl, postgres; Debian: postgresql-15)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "runuser (PostgreSQL refuses root; util-linux)"
    return None


@dataclass
class PgServer:
    """One server: its folder and port; `cpus` pins the postmaster (and so every backend)."""

    folder: Path
    port: int
    cpus: str | None = None
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def data(self) -> Path:
        return self.folder / "data"

    def _run(self, *command: str, timeout: float = 120) -> None:
        done = subprocess.run(
            as_postgres(list(command)), capture_output=True, text=True, timeout=timeout
        )
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stdout}\n{done.stderr}")

    def start(self) -> PgServer:
        """initdb (trust, user postgres), then pg_ctl start; returns when it answers."""
        folder = pg_bin()
        assert folder is not None, missing()
        self.folder.mkdir(parents=True)
        if os.geteuid() == 0:
            account = pwd.getpwnam("postgres")
            os.chown(self.folder, account.pw_uid, account.pw_gid)
        self._run(
            str(folder / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--no-sync",
        )
        options = {**SETTINGS, **self.settings, "port": str(self.port)}
        options["unix_socket_directories"] = str(self.folder)
        flags = " ".join(f"-c {name}={value}" for name, value in options.items())
        command = as_postgres(
            [
                str(folder / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.folder / "log"),
                "-o",
                flags,
                "-w",
                "-t",
                "60",
                "start",
            ]
        )
        if self.cpus is not None:
            # Pinned before pg_ctl starts the postmaster: every process it forks inherits it.
            command = ["taskset", "-c", self.cpus, *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=90)
        if done.returncode != 0:
            raise RuntimeError(f"pg_ctl start failed: {done.stdout}\n{done.stderr}\n{self.log()}")
        self.wait()
        return self

    def log(self) -> str:
        path = self.folder / "log"
        return path.read_text(errors="replace")[-4000:] if path.exists() else ""

    def dsn(self, database: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user=postgres dbname={database}"

    def url(self, database: str) -> str:
        """A cronplane (SQLAlchemy) URL of `database` on this server."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def wait(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with psycopg.connect(self.dsn(), connect_timeout=3) as conn:
                    conn.execute("SELECT 1")
                return
            except psycopg.Error:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def create(self, *names: str) -> None:
        """Create these databases."""
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            for name in names:
                conn.execute(f'CREATE DATABASE "{name}"')

    def postmaster_pid(self) -> int | None:
        try:
            return int((self.data / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def stop(self) -> None:
        """pg_ctl stop -m immediate (nothing here is kept)."""
        folder = pg_bin()
        if folder is None or self.postmaster_pid() is None:
            return
        subprocess.run(
            as_postgres([str(folder / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"]),
            capture_output=True,
            timeout=60,
        )
