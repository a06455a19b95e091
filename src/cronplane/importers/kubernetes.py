"""A way in from Kubernetes: CronJob manifests (`batch/v1`) as a cronplane app.yaml.

:func:`translate` is a function of the parsed YAML documents; :func:`read_documents`
is the only I/O (a file, or every ``*.yaml``/``*.yml`` under a directory). Each
CronJob becomes one job and one cron named after it.

| CronJob                               | manifest                                                  |
|---------------------------------------|-----------------------------------------------------------|
| ``spec.schedule`` (5 fields, ``@daily``…) | ``cron``, as written                                  |
| ``spec.timeZone``                     | ``timezone`` (absent: ``--timezone``, the controller's zone) |
| ``spec.suspend: true``                | ``enabled: false`` (the state the row is created in)      |
| ``concurrencyPolicy`` Allow (default) / Forbid / Replace | ``overlap`` allow / skip / cancel_running |
| ``startingDeadlineSeconds``           | ``misfire_grace``                                          |
| ``jobTemplate…backoffLimit`` (default 6) | the job's ``options.max_attempts`` = backoffLimit + 1   |
| ``jobTemplate…activeDeadlineSeconds`` | the job's ``options.timeout``                              |
| the container's ``image``, ``command``, ``args``, ``env`` | a ``container:IMAGE`` target (``kubernetes_pod``) |
| ``--as command``: ``command`` + ``args`` | a ``command:`` target on a worker's host (``kubernetes_pod``) |

By default each CronJob keeps running in its image: a ``container:`` target,
run by podman or docker on a cronplane worker. ``--as command`` writes host
commands instead, the image recorded for the operator to map. Not translated,
with the reason: ``@every`` schedules, a pod of several containers (and, as
commands, a container with neither command nor args: its image's entrypoint
is not in the manifest). Pod settings a run cannot have (volumes, secrets,
service account, resources, …) are listed in the notes. In a directory, a
file that cannot be read or parsed is listed and the others are translated.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import yaml

from cronplane.core import cron as cron_engine
from cronplane.core import yaml_bounds
from cronplane.core.cron_zones import known_zone
from cronplane.errors import (
    CronplaneError,
    InputFileTooLarge,
    InvalidRequest,
    ScheduleSyntax,
    UnknownZone,
)
from cronplane.importers.kubernetes_pod import AS_COMMAND, AS_CONTAINER, KINDS, job, mapping
from cronplane.importers.translation import (
    Names,
    Skipped,
    Translation,
    Untranslatable,
    cron_name,
    every_hint,
)
from cronplane.input_files import MAX_INPUT_BYTES, read_input

API_VERSIONS: Final = ("batch/v1", "batch/v1beta1")
OVERLAP: Final = {"Allow": "allow", "Forbid": "skip", "Replace": "cancel_running"}


def read_documents(path: Path) -> tuple[list[tuple[str, Any]], list[Skipped]]:
    """(file, document) for every YAML document in `path` (a file, or a directory's
    `*.yaml`/`*.yml` files, recursively, in name order), and the files of a directory
    that could not be read or parsed, each with its reason (one bad file does not lose
    the others). A single file that cannot be read raises: InvalidRequest, or the coded
    errors of core.yaml_bounds over its limits; InputFileTooLarge when the files hold
    more than MAX_INPUT_BYTES together."""
    folder = path.is_dir()
    files = (
        sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
        if folder
        else [path]
    )
    found: list[tuple[str, Any]] = []
    unreadable: list[Skipped] = []
    total = 0
    for file in files:
        try:
            data = read_input(file, MAX_INPUT_BYTES - total)
            total += len(data)
            found += [(str(file), doc) for doc in yaml_bounds.load_all(data, str(file))]
        except InputFileTooLarge as error:
            if total == 0:
                raise
            raise InputFileTooLarge(
                f"the files under {str(path)!r} hold more than {MAX_INPUT_BYTES} bytes",
                {"path": str(path), "limit": MAX_INPUT_BYTES},
            ) from error
        except OSError as error:
            problem = InvalidRequest(f"cannot read {str(file)!r}: {error.strerror}")
            if not folder:
                raise problem from error
            unreadable.append(Skipped(str(file), problem.message))
        except yaml.YAMLError as error:
            problem = InvalidRequest(f"{str(file)!r} is not YAML: {error}")
            if not folder:
                raise problem from error
            unreadable.append(Skipped(str(file), " ".join(problem.message.split())))
        except CronplaneError as error:  # over a YAML limit, duplicate keys
            if not folder:
                raise
            unreadable.append(Skipped(str(file), f"{error.code.text} {error.message}"))
    return found, unreadable


def stack_name(path: Path, documents: Iterable[tuple[str, Any]]) -> str:
    """A manifest name for an import of `path`: a file holding one CronJob is named after
    it, any other file or directory after its own name (`k8s/backup.yaml` → `backup`)."""
    cronjobs = [
        d for _, d in _flatten(documents) if isinstance(d, Mapping) and d.get("kind") == "CronJob"
    ]
    if not path.is_dir() and len(cronjobs) == 1:
        metadata = cronjobs[0].get("metadata")
        if isinstance(metadata, Mapping) and metadata.get("name"):
            return cron_name(str(metadata["name"]), "kubernetes")
    return cron_name(path.stem if not path.is_dir() else path.resolve().name, "kubernetes")


def translate(
    documents: Iterable[tuple[str, Any]],
    *,
    stack: str,
    timezone: str = "UTC",
    unreadable: Iterable[Skipped] = (),
    as_kind: str = AS_CONTAINER,
) -> Translation:
    """Translate the CronJobs among `documents` ((file, parsed YAML) pairs); `timezone`
    is the controller's zone, for CronJobs without `spec.timeZone`; `unreadable` the
    files read_documents could not parse (listed first); `as_kind` the target each
    container becomes (KINDS: `container`, the default, or `command`)."""
    known_zone(timezone)
    if as_kind not in KINDS:
        raise InvalidRequest(f"--as {as_kind!r} is not one of {', '.join(KINDS)}", {"field": "as"})
    jobs: dict[str, dict[str, Any]] = {}
    crons: dict[str, dict[str, Any]] = {}
    names = Names()
    skipped: list[Skipped] = list(unreadable)
    notes: list[str] = []
    others: dict[str, int] = {}
    without_zone = 0
    for file, document in _flatten(documents):
        if not isinstance(document, Mapping):
            continue
        kind = document.get("kind")
        if kind != "CronJob":
            others[str(kind)] = others.get(str(kind), 0) + 1
            continue
        metadata = document.get("metadata") or {}
        name = (
            str(metadata.get("name") or "cronjob") if isinstance(metadata, Mapping) else "cronjob"
        )
        namespace = (
            str(metadata.get("namespace") or "default")
            if isinstance(metadata, Mapping)
            else "default"
        )
        label = f"{namespace}/{name} ({file})"
        try:
            job_spec, declared, entry_notes = _cronjob(document, namespace, name, timezone, as_kind)
        except Untranslatable as error:
            skipped.append(Skipped(label, str(error)))
            continue
        spec = document.get("spec")
        without_zone += not (isinstance(spec, Mapping) and spec.get("timeZone"))
        if "timezone" in declared and declared["timezone"] == "UTC":
            del declared["timezone"]
        entry = names.claim(cron_name(name, "cronjob"))
        jobs[entry] = job_spec
        crons[entry] = {"job": entry, **declared}
        notes += [f"{namespace}/{name}: {note}" for note in entry_notes]
    if others:
        shown = ", ".join(f"{count} {kind}" for kind, count in sorted(others.items()))
        notes.append(f"documents that are not CronJobs were ignored: {shown}")
    if without_zone:
        notes.append(
            f"{without_zone} CronJob(s) without spec.timeZone are read in {timezone} "
            "(the controller's zone: --timezone changes it)"
        )
    if crons and as_kind == AS_COMMAND:
        notes.append(
            "each container became a command: target that runs ON A CRONPLANE WORKER'S HOST, "
            "not in its image: the image is in each job's title and options.image; install "
            "the program on the workers, or point the job at another target"
        )
    elif crons:
        notes.append(
            "each container became a container: target: its image runs through podman or "
            "docker on a cronplane worker (--as command writes host commands instead)"
        )
    if crons:
        notes.append(
            f"{as_kind}: jobs need CRONPLANE_ALLOW_COMMAND_TARGETS=1 on the server and the "
            "workers, and a platform admin to install them"
        )
    document = {"name": cron_name(stack, "kubernetes"), "jobs": jobs, "crons": crons}
    return Translation(document, skipped, notes, command="kubernetes", noun="CronJobs")


def _flatten(documents: Iterable[tuple[str, Any]]) -> Iterable[tuple[str, Any]]:
    """Documents, with the items of a `kind: List` in its place."""
    for file, document in documents:
        if isinstance(document, Mapping) and document.get("kind") == "List":
            items = document.get("items")
            if isinstance(items, list):
                yield from ((file, item) for item in items)
        else:
            yield file, document


def _cronjob(
    document: Mapping[str, Any], namespace: str, name: str, timezone: str, as_kind: str
) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """(job spec, cron declaration, notes) of one CronJob; Untranslatable otherwise."""
    notes: list[str] = []
    api = document.get("apiVersion")
    if api not in API_VERSIONS:
        raise Untranslatable(f"apiVersion {api!r} is not batch/v1")
    spec = mapping(document.get("spec"), "spec")
    schedule = spec.get("schedule")
    if not isinstance(schedule, str) or not schedule.strip():
        raise Untranslatable("spec.schedule is missing")
    cron, zone = _schedule(schedule.strip(), spec.get("timeZone"), timezone)
    declared: dict[str, Any] = {"cron": cron}
    if zone is not None:
        declared["timezone"] = zone
    policy = spec.get("concurrencyPolicy", "Allow")
    if not isinstance(policy, str) or policy not in OVERLAP:
        raise Untranslatable(f"concurrencyPolicy {policy!r} is not Allow, Forbid or Replace")
    declared["overlap"] = OVERLAP[policy]
    deadline = spec.get("startingDeadlineSeconds")
    if deadline is not None:
        if isinstance(deadline, bool) or not isinstance(deadline, int) or deadline < 0:
            raise Untranslatable(f"startingDeadlineSeconds {deadline!r} is not whole seconds")
        declared["misfire_grace"] = deadline
    if spec.get("suspend") is True:
        declared["enabled"] = False
    for key in ("successfulJobsHistoryLimit", "failedJobsHistoryLimit"):
        if key in spec:
            notes.append(f"{key} not carried over: cronplane keeps runs for its retention")
    job_spec = job(spec, namespace, name, notes, as_kind)
    if as_kind == AS_COMMAND:
        job_spec["options"]["namespace"] = namespace
    return job_spec, declared, notes


def _schedule(schedule: str, zone_field: Any, default_zone: str) -> tuple[str, str | None]:
    """(cron, zone) of spec.schedule and spec.timeZone (a `CRON_TZ=`/`TZ=` prefix too)."""
    zone: str | None = None
    if schedule.startswith(("CRON_TZ=", "TZ=")):
        prefix, _, schedule = schedule.partition(" ")
        zone = prefix.partition("=")[2]
        schedule = schedule.strip()
    if zone_field is not None:
        zone = str(zone_field)
    zone = zone or (default_zone if default_zone != "UTC" else None)
    if zone is not None:
        try:
            known_zone(zone)
        except UnknownZone as error:
            raise Untranslatable(f"time zone {zone!r} is not a known zone") from error
    if schedule.startswith("@every"):
        raise Untranslatable(
            f"{schedule!r}: Kubernetes counts @every from the controller's last run; "
            + every_hint(schedule)
        )
    if schedule.startswith("@") and schedule.lower() not in (
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ):
        raise Untranslatable(f"{schedule!r} is not a schedule Kubernetes or cronplane knows")
    try:
        cron_engine.parse(schedule, seed="kubernetes")
    except ScheduleSyntax as error:
        raise Untranslatable(f"schedule {schedule!r} is not valid: {error.message}") from error
    return schedule.lower() if schedule.startswith("@") else schedule, zone
