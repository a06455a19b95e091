"""A CronJob's job template as a cronplane job: a `container:` target (the default) or,
with `--as command`, a `command:` target on the worker's host.

`container` (docs/targets.md, `container:IMAGE`): the image is the target, the
container's `command` and `args` become `options.command` and `options.args`
as Kubernetes gives them (no shell in between), `imagePullPolicy` Always /
Never / IfNotPresent becomes `options.pull` always / never / missing, plain
`env` values `options.env`. The image's own entrypoint runs when the container
has no `command`, as in the pod. What a `container:` run has no option for
(`workingDir`, volumes, resources, …) is named in the notes.

`command`: the container's `command` + `args` quoted into one shell line
(`sh -c SCRIPT`: the script, run by that shell), its image recorded in the
job's title and options for the operator to map.

Both: `backoffLimit` + 1 → `max_attempts`, `activeDeadlineSeconds` → `timeout`,
`$(VAR)` in command and args expanded from the plain `env` values as Kubernetes
does (`$$` is `$`; a `valueFrom` one is left as written, with a note).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any, Final

from cronplane.importers.translation import Untranslatable
from cronplane.targets import PermanentFailure
from cronplane.targets.container import engine_arguments

AS_CONTAINER: Final = "container"
AS_COMMAND: Final = "command"
KINDS: Final = (AS_CONTAINER, AS_COMMAND)
DEFAULT_BACKOFF_LIMIT: Final = 6
PULL: Final = {"Always": "always", "Never": "never", "IfNotPresent": "missing"}
# Pod and container settings neither target can honour.
POD_SETTINGS: Final = (
    "volumes",
    "initContainers",
    "serviceAccountName",
    "nodeSelector",
    "affinity",
    "tolerations",
    "securityContext",
    "imagePullSecrets",
)
CONTAINER_SETTINGS: Final = ("volumeMounts", "resources", "envFrom", "securityContext", "ports")
MAX_TITLE: Final = 200
# `sh -c SCRIPT`: the script is written as the command: line, run by that shell.
SHELLS: Final = frozenset({"sh", "bash", "ash", "dash", "zsh", "ksh"})
# Kubernetes' variable references in command and args: `$(VAR)`; `$$` is one `$`
# (so `$$(VAR)` is the text `$(VAR)`).
_REFERENCE: Final = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")


def job(
    spec: Mapping[str, Any], namespace: str, name: str, notes: list[str], kind: str
) -> dict[str, Any]:
    """The job of a CronJob's jobTemplate (`kind`: container or command); Untranslatable
    when it has no single container, or one the target cannot run."""
    template = mapping(spec.get("jobTemplate"), "spec.jobTemplate")
    job_spec = mapping(template.get("spec"), "spec.jobTemplate.spec")
    pod = mapping(mapping(job_spec.get("template"), "….template").get("spec"), "….template.spec")
    containers = pod.get("containers")
    if not isinstance(containers, list) or not containers:
        raise Untranslatable("the job template has no containers")
    if len(containers) > 1:
        names = ", ".join(str(c.get("name")) for c in containers if isinstance(c, Mapping))
        raise Untranslatable(
            f"the pod has {len(containers)} containers ({names}): one target cannot run them"
        )
    container = mapping(containers[0], "the container")
    env, secret_names = _environment(container.get("env"))
    command, args = (
        _words(container.get("command"), "command"),
        _words(container.get("args"), "args"),
    )
    command, unexpanded = _expand(command, env, secret_names)
    args, unexpanded_args = _expand(args, env, secret_names)
    unexpanded += [n for n in unexpanded_args if n not in unexpanded]
    if unexpanded:
        notes.append(
            f"$({'), $('.join(unexpanded)}) in the command: Kubernetes expands them from "
            "env values that come from secrets or fields (valueFrom), not carried over; "
            "left as written"
        )
    if kind == AS_CONTAINER:
        made = _container_job(container, command, args, env, notes)
    else:
        made = _command_job(container, command, args, env, notes)
    if secret_names:
        where = "the job's options.env" if kind == AS_CONTAINER else "the workers' environment"
        notes.append(
            f"env {', '.join(secret_names)} come from secrets or fields (valueFrom): not carried "
            f"over, set them in {where}"
        )
    options = made["options"]
    backoff = job_spec.get("backoffLimit", DEFAULT_BACKOFF_LIMIT)
    if isinstance(backoff, int) and not isinstance(backoff, bool) and backoff >= 0:
        options["max_attempts"] = backoff + 1
    deadline = job_spec.get("activeDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool) and deadline > 0:
        options["timeout"] = deadline
    for key in ("parallelism", "completions"):
        if isinstance(job_spec.get(key), int) and job_spec[key] > 1:
            notes.append(f"{key}={job_spec[key]} not carried over: cronplane runs one per fire")
    dropped = [k for k in POD_SETTINGS if pod.get(k)] + [
        f"container.{k}" for k in CONTAINER_SETTINGS if container.get(k)
    ]
    if dropped:
        notes.append(f"not carried over (a {kind}: run has none): {', '.join(dropped)}")
    made["title"] = " ".join(f"CronJob {namespace}/{name}: {made['title']}".split())[:MAX_TITLE]
    return made


def _container_job(
    container: Mapping[str, Any],
    command: list[str],
    args: list[str],
    env: dict[str, str],
    notes: list[str],
) -> dict[str, Any]:
    """A `container:IMAGE` job: the pod's container, run by podman or docker."""
    image = container.get("image")
    if not isinstance(image, str) or not image.strip():
        raise Untranslatable("the container has no image")
    refused = [n for n in env if not _runnable_variable(image, n)]
    if refused:
        notes.append(
            f"env {', '.join(refused)} not carried over: a container: run passes only "
            "variables named with letters, digits and _"
        )
    env = {n: v for n, v in env.items() if n not in refused}
    options: dict[str, Any] = {}
    if command:
        options["command"] = command
    if args:
        options["args"] = args
    if env:
        options["env"] = env
    policy = container.get("imagePullPolicy")
    if isinstance(policy, str) and policy in PULL:
        options["pull"] = PULL[policy]
    try:  # the target's own check of what it will be given
        engine_arguments(image, options, "check", list(env))
    except PermanentFailure as error:
        raise Untranslatable(f"a container: target cannot run it: {error}") from error
    if isinstance(container.get("workingDir"), str):
        notes.append(
            f"workingDir {container['workingDir']} not carried over: a container: run "
            "starts in its image's WORKDIR"
        )
    return {"title": f"image {image}", "target": f"container:{image.strip()}", "options": options}


def _runnable_variable(image: str, name: str) -> bool:
    """Whether the container: target passes a variable of this name (its own rule)."""
    try:
        engine_arguments(image, {}, "check", [name])
    except PermanentFailure:
        return False
    return True


def _command_job(
    container: Mapping[str, Any],
    command: list[str],
    args: list[str],
    env: dict[str, str],
    notes: list[str],
) -> dict[str, Any]:
    """A `command:LINE` job: the container's command run on a worker's host (`--as command`)."""
    image = str(container.get("image") or "?")
    if not command and not args:
        raise Untranslatable(
            f"the container (image {image}) has neither command nor args: it runs its image's "
            "entrypoint, which the manifest does not show (without --as command, the image runs)"
        )
    if not command:
        notes.append(
            f"the container has args and no command: Kubernetes passes them to the image's "
            f"ENTRYPOINT ({image}), which the manifest does not show; the args were written "
            "as the command: prefix the entrypoint's program if it is not the first arg"
        )
    words = [*command, *args]
    shell = None
    if len(words) == 3 and words[0].rsplit("/", 1)[-1] in SHELLS and words[1] == "-c":
        shell, line = words[0], words[2].strip()  # `sh -c SCRIPT`: the script is the line
        if not line.strip():
            raise Untranslatable(f"the container runs {words[0]} -c with an empty script")
    else:
        line = shlex.join(words)
    options: dict[str, Any] = {"image": image, "container": str(container.get("name") or "")}
    if shell is not None and shell not in ("sh", "/bin/sh"):
        options["shell"] = shell
    if env:
        options["env"] = env
    if isinstance(container.get("workingDir"), str):
        options["cwd"] = container["workingDir"]
    return {"title": f"image {image}: {line}", "target": f"command:{line}", "options": options}


def _expand(
    words: list[str], env: Mapping[str, str], elsewhere: list[str]
) -> tuple[list[str], list[str]]:
    """The words with `$(VAR)` replaced as Kubernetes does from the container's plain env
    values (`$$` is `$`, so `$$(VAR)` is the text `$(VAR)`; an unknown VAR stays as
    written), and the names it could not expand because their values come from
    elsewhere (valueFrom)."""
    unexpanded: list[str] = []

    def one(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        if name in env:
            return env[name]
        if name in elsewhere and name not in unexpanded:
            unexpanded.append(name)
        return match.group(0)

    return [_REFERENCE.sub(one, word) for word in words], unexpanded


def _words(value: Any, what: str) -> list[str]:
    """A container's command or args as a list of strings."""
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(w, str | int | float) for w in value):
        raise Untranslatable(f"container {what} is not a list of strings")
    return [str(w) for w in value]


def _environment(value: Any) -> tuple[dict[str, str], list[str]]:
    """Plain `env` values, and the names of those that come from elsewhere (valueFrom)."""
    env: dict[str, str] = {}
    elsewhere: list[str] = []
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        if "value" in item:
            env[item["name"]] = str(item["value"])
        else:
            elsewhere.append(item["name"])
    return env, elsewhere


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    """`value` when it is a mapping; Untranslatable naming `what` otherwise."""
    if not isinstance(value, Mapping):
        raise Untranslatable(f"{what} is missing or not a mapping")
    return value
