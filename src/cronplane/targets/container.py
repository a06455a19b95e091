"""`container:IMAGE` — run an image on the worker's host through podman or docker.

The kind a Kubernetes team's CronJobs map to: the job keeps running in its own
image, not as a command on the worker's host. It is guarded exactly as
`command:` is (targets.command): workers run it only where
``CRONPLANE_ALLOW_COMMAND_TARGETS=1`` (elsewhere the item fails at once with
``X403250CMDOFF``), and only a platform admin may create a container job or
change its image or options (``core.access.check_command_job``).

The engine is ``CRONPLANE_CONTAINER_ENGINE`` (a name or a path) when set, else
the first of ``podman`` and ``docker`` on the worker's PATH; with neither, the
item fails unrun with ``X503253CTRENG``.

Job options read here, besides `timeout` (as for `command:`):

| option | meaning | engine flag |
|---|---|---|
| `command` | list of strings: replaces the image's entrypoint (Kubernetes' `command`) | `--entrypoint` first word, the rest after the image |
| `args` | list of strings: after the image (Kubernetes' `args`; replaces its CMD) | after the image |
| `env` | object: the container's variables | `--env NAME` each |
| `pull` | `missing` (default), `always` or `never` | `--pull` |
| `network` | a network name (`none`, `host`, `bridge`, one of yours); default: the engine's | `--network` |

The container sees only the variables named here and the run's context
(``CRONPLANE_PAYLOAD``, ``CRONPLANE_ITEM_ID``, … as `command:` has them),
passed by name so the payload never shows on a command line. No volume, port,
device or privilege option exists: a job that needs one is an image's or an
operator's decision, not a tenant's. The container runs with ``--rm`` under the
name ``cronplane-<item id>-<attempt>``; at the timeout it is killed through the
engine (killing the client alone would leave it running) and the attempt fails.
A cancel of a started run behaves as for `command:`: the run goes on to its end
(docs/controls.md). The result is ``{"exit_code", "stdout", "stderr"}`` as for
`command:` (the engine's own errors, an image it cannot find, are in stderr
with exit code 125).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any, Final

from cronplane.errors import ContainerEngineMissing
from cronplane.settings import COMMAND_TARGETS_VARIABLE, command_targets_enabled
from cronplane.targets import PermanentFailure, RunContext
from cronplane.targets.command import (
    DEFAULT_TIMEOUT,
    ERROR_TAIL,
    OUTPUT_LIMIT,
    CommandsDisabled,
    OutputTail,
    command_environment,
    kill_group,
)

ENGINE_VARIABLE: Final = "CRONPLANE_CONTAINER_ENGINE"
ENGINES: Final = ("podman", "docker")
PULL_POLICIES: Final = ("missing", "always", "never")
_NETWORK: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,255}")
_ENGINE_GRACE: Final = 30.0  # seconds an engine's kill or rm may take


class NoContainerEngine(PermanentFailure, ContainerEngineMissing):
    """Neither podman nor docker on this worker: fail, never retry here."""


class ContainerFailed(Exception):
    """The container exited non-zero or ran past its timeout (retried per max_attempts)."""


def find_engine(environ: Mapping[str, str] | None = None) -> str | None:
    """The engine's path: CRONPLANE_CONTAINER_ENGINE, else podman, else docker; None: none."""
    env = os.environ if environ is None else environ
    path = env.get("PATH")
    named = env.get(ENGINE_VARIABLE, "").strip()
    for candidate in (named,) if named else ENGINES:
        found = shutil.which(candidate, path=path)
        if found is not None:
            return found
    return None


def _strings(options: Mapping[str, Any], key: str) -> list[str]:
    value = options.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise PermanentFailure(f"options.{key} must be a list of strings")
    return value


def engine_arguments(
    image: str, options: Mapping[str, Any], name: str, env_names: list[str]
) -> list[str]:
    """`run …` for one attempt (without the engine): checked options, variables by name."""
    command, args = _strings(options, "command"), _strings(options, "args")
    pull = options.get("pull", "missing")
    if pull not in PULL_POLICIES:
        raise PermanentFailure(f"options.pull must be one of {', '.join(PULL_POLICIES)}")
    network = options.get("network")
    if network is not None and (not isinstance(network, str) or not _NETWORK.fullmatch(network)):
        raise PermanentFailure("options.network must be a network's name")
    bad = [n for n in env_names if not _ENV_NAME.fullmatch(n)]
    if bad:
        raise PermanentFailure(f"options.env names an invalid variable: {bad[0][:80]!r}")
    argv = ["run", "--rm", "--name", name, "--pull", pull, "--label", f"cronplane.run={name}"]
    argv.append("--no-healthcheck")  # a one-shot job: an image's health check has no use
    argv += ["--network", network] if network is not None else []
    for variable in env_names:
        argv += ["--env", variable]  # the value comes from the engine's own environment
    if command:
        argv += ["--entrypoint", command[0]]
    # `--` is no use here: the engines read options before the image only, and an image
    # reference never starts with `-` (core.validation).
    return [*argv, image, *command[1:], *args]


class ContainerTarget:
    """Runs `container:` images through podman or docker, bounded by the item's timeout."""

    def __init__(
        self, enabled: bool, engine: str | None = None, *, output_limit: int = OUTPUT_LIMIT
    ) -> None:
        self.enabled = enabled
        self.engine = engine
        self.output_limit = output_limit

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> ContainerTarget:
        """Enabled by CRONPLANE_ALLOW_COMMAND_TARGETS=1, with the engine this host has."""
        return cls(command_targets_enabled(environ), find_engine(environ))

    def run(self, spec: str, payload: dict[str, Any], context: RunContext) -> Any:
        """Run the image; its exit code and output tails are the result."""
        if not self.enabled:
            raise CommandsDisabled(
                f"job {context.job!r} is a container: job and this worker does not run them "
                f"({COMMAND_TARGETS_VARIABLE} is not 1)",
                {"job": context.job},
            )
        if self.engine is None:
            raise NoContainerEngine(
                f"job {context.job!r} is a container: job and this worker has neither podman "
                f"nor docker on its PATH (or set {ENGINE_VARIABLE})",
                {"job": context.job, "engines": list(ENGINES)},
            )
        options = context.options
        timeout = DEFAULT_TIMEOUT if context.timeout is None else context.timeout
        extra = options.get("env", {})
        if not isinstance(extra, dict):
            raise PermanentFailure("options.env must be an object")
        env = command_environment(os.environ, extra, context, payload)
        # The container gets the job's variables and the run's, never the worker's.
        names = [str(k) for k in extra] + [
            k for k in env if k.startswith("CRONPLANE_") and k not in extra
        ]
        name = f"cronplane-{context.item_id}-{context.attempt}"
        argv = [self.engine, *engine_arguments(spec, options, name, names)]
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=env,
                start_new_session=True,
            )
        except OSError as error:
            raise PermanentFailure(f"cannot start {self.engine}: {error}") from error
        assert process.stdout is not None and process.stderr is not None
        stdout = OutputTail(process.stdout, self.output_limit)
        stderr = OutputTail(process.stderr, self.output_limit)
        timed_out = False
        try:
            code = process.wait(timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            code = self._stop(process, name, env)
        finally:
            if process.poll() is None:  # the worker itself is being interrupted
                self._stop(process, name, env)
        out, err = stdout.text(5.0), stderr.text(5.0)
        if timed_out:
            raise ContainerFailed(
                f"container timed out after {timeout:g} s and was killed; "
                f"stderr: {err[-ERROR_TAIL:]}"
            )
        if code != 0:
            raise ContainerFailed(f"container exited with {code}; stderr: {err[-ERROR_TAIL:]}")
        return {"exit_code": code, "stdout": out, "stderr": err}

    def _stop(self, process: subprocess.Popen[bytes], name: str, env: Mapping[str, str]) -> int:
        """Kill the container through the engine (its client's death would not stop it;
        `rm` in case it was created and never started), then the client if it lingers."""
        self._kill(name, env)
        try:
            return process.wait(_ENGINE_GRACE)
        except subprocess.TimeoutExpired:  # still pulling, say: the client goes too
            kill_group(process.pid)
            return process.wait()

    def _kill(self, name: str, env: Mapping[str, str]) -> None:
        """`kill NAME`, then `rm --force --volumes NAME`, through the engine."""
        assert self.engine is not None
        for action in (["kill", name], ["rm", "--force", "--volumes", name]):
            with contextlib.suppress(subprocess.TimeoutExpired, OSError):
                subprocess.run(
                    [self.engine, *action],
                    env=dict(env),
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=_ENGINE_GRACE,
                    check=False,
                )
