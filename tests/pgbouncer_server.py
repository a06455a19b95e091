"""A PgBouncer of the test session's own, in transaction pooling mode.

With CRONPLANE_TEST_PGBOUNCER=1 the PostgreSQL tests run through it: the
session's database URL (conftest's `pg_session_url`) names PgBouncer's port
and carries `?pgbouncer=true`, so every process the tests start, the
migrations included, works through transaction pooling (docs/operations.md,
"Through PgBouncer"). It listens on a free loopback port and forwards every
database to the PostgreSQL of CRONPLANE_TEST_PG_URL with the client's own user
name (trust). A missing `pgbouncer` skips locally and fails under CI=true
(`required_services`).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psycopg
from sqlalchemy.engine import make_url

from required_services import require_service

VARIABLE = "CRONPLANE_TEST_PGBOUNCER"
# What one test session may hold on the server at once (PostgreSQL allows 100, shared).
POOL_SIZE = 30
# Throughput settings docs/operations.md recommends: 64 KiB packet buffers and no yielding
# to other connections mid-stream, for the fire path's COPY (10,000 bursts, 8 rotated
# rounds: -15 % of direct with PgBouncer's defaults, +4 % with these).
THROUGHPUT: dict[str, str | int] = {"pkt_buf": 65536, "sbuf_loopcnt": 0}


def wanted() -> bool:
    """Whether this session's PostgreSQL tests go through PgBouncer."""
    return os.environ.get(VARIABLE, "").strip().lower() in ("1", "true", "yes")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class PgBouncer:
    """A running PgBouncer: `through(url)` is `url` by way of it."""

    port: int
    process: subprocess.Popen[bytes]
    folder: Path

    def through(self, direct_url: str) -> str:
        """The same database and user, through PgBouncer (transaction pooling)."""
        url = make_url(direct_url).set(host="127.0.0.1", port=self.port)
        url = url.update_query_dict({"pgbouncer": "true"})
        return url.render_as_string(hide_password=False)

    def log(self) -> str:
        """What it said (its output and its log file)."""
        paths = [self.folder / "output.txt", self.folder / "pgbouncer.log"]
        return "".join(path.read_text(errors="replace") for path in paths if path.exists())

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def start(admin_url: str, **settings: str | int) -> PgBouncer:
    """Start PgBouncer in front of the server `admin_url` names, with THROUGHPUT and
    `settings` added to its [pgbouncer] section; ready when returned."""
    binary = shutil.which("pgbouncer") or "/usr/sbin/pgbouncer"
    if not Path(binary).exists():
        require_service("PgBouncer", "no pgbouncer executable (apt-get install pgbouncer)")
    server = make_url(admin_url)
    folder = Path(tempfile.mkdtemp(prefix="cronplane-pgbouncer-"))
    port = free_port()
    (folder / "userlist.txt").write_text(f'"{server.username or "postgres"}" ""\n')
    (folder / "pgbouncer.ini").write_text(
        "[databases]\n"
        f"* = host={server.host or '127.0.0.1'} port={server.port or 5432}\n"
        "[pgbouncer]\n"
        "listen_addr = 127.0.0.1\n"
        f"listen_port = {port}\n"
        "unix_socket_dir =\n"
        "auth_type = trust\n"
        f"auth_file = {folder / 'userlist.txt'}\n"
        "pool_mode = transaction\n"
        "max_client_conn = 1000\n"
        f"default_pool_size = {POOL_SIZE}\n"
        f"logfile = {folder / 'pgbouncer.log'}\n"
        + "".join(f"{name} = {value}\n" for name, value in {**THROUGHPUT, **settings}.items())
    )
    command = [binary, str(folder / "pgbouncer.ini")]
    if os.geteuid() == 0:
        # PgBouncer refuses to run as root: it drops to the server's own user.
        user = pwd.getpwnam("postgres")
        for path in (folder, *folder.iterdir()):
            os.chown(path, user.pw_uid, user.pw_gid)
        command[1:1] = ["-u", "postgres"]
    with (folder / "output.txt").open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    bouncer = PgBouncer(port, process, folder)
    probe = make_url(bouncer.through(admin_url)).difference_update_query(["pgbouncer"])
    plain = probe.set(drivername="postgresql").render_as_string(hide_password=False)
    deadline = time.monotonic() + 15
    while True:
        try:
            with psycopg.connect(plain, connect_timeout=3) as conn:
                conn.execute("SELECT 1")
            return bouncer
        except psycopg.Error as error:
            if process.poll() is not None or time.monotonic() > deadline:
                said = bouncer.log()
                bouncer.stop()
                require_service("PgBouncer", f"{error}; {said}".strip())
            time.sleep(0.1)
