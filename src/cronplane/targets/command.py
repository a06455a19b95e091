"""`command:LINE` — run one shell line on the worker's host, as cron would.

The line is given to ``/bin/sh -c`` (a job's `options.shell` names another
shell, e.g. a crontab's ``SHELL=/bin/bash``): crontab lines and Kubernetes
commands are shell lines, with pipes, redirections and variables, and running
them any other way would change their meaning. That is exactly why the kind
is guarded twice: workers run it only where the installation set
``CRONPLANE_ALLOW_COMMAND_TARGETS=1`` (elsewhere the item fails at once with
``X403250CMDOFF``), and only a platform admin may create or change a command
job (``core.access.check_command_job``, enforced by the service). A tenant's
payload never becomes part of the line: it reaches the command as JSON in the
``CRONPLANE_PAYLOAD`` variable.

Job options read here: `timeout` (seconds, default 3600: the command's whole
process group is killed after it; the item carries it, and a schedule's own
`timeout` replaces it), `shell`, `cwd`, and `env` (an object of
variables laid over the worker's environment, from which every
``CRONPLANE_*`` variable — the database URL among them — is removed first).

The result is ``{"exit_code", "stdout", "stderr"}``, each stream's last
64 KiB (decoded as UTF-8, invalid bytes replaced) behind a marker saying how
much was cut. The same three are the attempt's output (targets.output), kept
whatever the end: a failed or timed-out run's streams are read with
`cronplane queue logs`. A non-zero exit or a timeout is a failure whose message holds
the exit code and the end of stderr; the worker retries it per the job's
`max_attempts` like any failure (the importers write `max_attempts: 1`: cron
never retries).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
from collections.abc import Mapping
from typing import IO, Any, Final

from cronplane.errors import CommandTargetsOff
from cronplane.settings import COMMAND_TARGETS_VARIABLE, command_targets_enabled
from cronplane.targets import PermanentFailure, RunContext, output

DEFAULT_TIMEOUT: Final = 3600.0
OUTPUT_LIMIT: Final = 64 * 1024  # bytes kept of each stream
ERROR_TAIL: Final = 2000  # characters of stderr in the failure message
DEFAULT_SHELL: Final = "/bin/sh"
_CHUNK: Final = 65536


class CommandsDisabled(PermanentFailure, CommandTargetsOff):
    """This worker's installation has not enabled command targets: fail, never run."""


class CommandFailed(Exception):
    """The command exited non-zero or ran past its timeout (retried per max_attempts)."""


class OutputTail:
    """The last `limit` bytes read from a pipe, and how many came before them."""

    def __init__(self, pipe: IO[bytes], limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.total = 0
        self._thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self._thread.start()

    def _drain(self, pipe: IO[bytes]) -> None:
        with pipe:
            while chunk := os.read(pipe.fileno(), _CHUNK):
                self.total += len(chunk)
                self.kept += chunk
                if len(self.kept) > self.limit:
                    del self.kept[: len(self.kept) - self.limit]

    def text(self, grace: float) -> str:
        """What was kept, with a marker when the start was cut; waits `grace` for the pipe."""
        self._thread.join(grace)
        text = bytes(self.kept).decode(errors="replace")
        cut = self.total - len(self.kept)
        return f"[… {cut} bytes cut …]\n{text}" if cut > 0 else text


def command_environment(
    base: Mapping[str, str], extra: Mapping[str, Any], context: RunContext, payload: Any
) -> dict[str, str]:
    """The command's variables: the worker's without CRONPLANE_*, the job's `env`, the run's."""
    env = {k: v for k, v in base.items() if not k.startswith("CRONPLANE_")}
    env.update({str(k): str(v) for k, v in extra.items()})
    env.update(
        {
            "CRONPLANE_PAYLOAD": json.dumps(payload, ensure_ascii=False),
            "CRONPLANE_ITEM_ID": str(context.item_id),
            "CRONPLANE_TENANT": context.tenant,
            "CRONPLANE_STACK": context.stack,
            "CRONPLANE_ENVIRONMENT": context.environment,
            "CRONPLANE_JOB": context.job,
            "CRONPLANE_SCHEDULE": context.schedule or "",
            "CRONPLANE_SCHEDULED_FOR": (
                context.scheduled_for.isoformat() if context.scheduled_for else ""
            ),
            "CRONPLANE_ATTEMPT": str(context.attempt),
        }
    )
    return env


class CommandTarget:
    """Runs `command:` lines in a subprocess of their own session (killable as a group)."""

    def __init__(self, enabled: bool, *, output_limit: int = OUTPUT_LIMIT) -> None:
        self.enabled = enabled
        self.output_limit = output_limit

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> CommandTarget:
        """A target enabled by CRONPLANE_ALLOW_COMMAND_TARGETS=1 (off otherwise)."""
        return cls(command_targets_enabled(environ))

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Run the line; its exit code and output tails are the result."""
        if not self.enabled:
            raise CommandsDisabled(
                f"job {context.job!r} is a command: job and this worker does not run them "
                f"({COMMAND_TARGETS_VARIABLE} is not 1)",
                {"job": context.job},
            )
        options = context.options
        # The item's timeout (a schedule's own, else the job's option, checked when
        # the job was registered), as for every target; a line never runs unbounded.
        timeout = DEFAULT_TIMEOUT if context.timeout is None else context.timeout
        shell = options.get("shell", DEFAULT_SHELL)
        extra = options.get("env", {})
        cwd = options.get("cwd")
        if not isinstance(shell, str) or not isinstance(extra, dict):
            raise PermanentFailure("options.shell must be a path and options.env an object")
        if cwd is not None and not isinstance(cwd, str):
            raise PermanentFailure("options.cwd must be a path")
        try:
            process = subprocess.Popen(
                [shell, "-c", spec],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=command_environment(os.environ, extra, context, payload),
                cwd=cwd,
                # Its own process group: a timeout kills the line's children too.
                start_new_session=True,
            )
        except OSError as error:  # no such shell or cwd: another attempt cannot help
            raise PermanentFailure(f"cannot start {shell}: {error}") from error
        assert process.stdout is not None and process.stderr is not None
        stdout = OutputTail(process.stdout, self.output_limit)
        stderr = OutputTail(process.stderr, self.output_limit)
        try:
            code = process.wait(timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            kill_group(process.pid)
            code = process.wait()
            timed_out = True
        finally:
            if process.poll() is None:  # the worker itself is being interrupted
                kill_group(process.pid)
                process.wait()
        # A child that left the group may hold the pipes open: do not wait for it long.
        out, err = stdout.text(5.0), stderr.text(5.0)
        # Kept with the attempt whatever the end (targets.output): a failure's output too.
        output.note(exit_code=None if timed_out else code, stdout=out, stderr=err)
        if timed_out:
            raise CommandFailed(
                f"command timed out after {timeout:g} s and was killed; stderr: {err[-ERROR_TAIL:]}"
            )
        if code != 0:
            raise CommandFailed(f"command exited with {code}; stderr: {err[-ERROR_TAIL:]}")
        return {"exit_code": code, "stdout": out, "stderr": err}


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by `pid` (gone already: nothing to do)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
