"""A way in from Temporal: its schedules, as `describe`/`list` print them, as an app.yaml.

:func:`translate` is a function of the schedule documents (the JSON of
``temporal schedule describe -o json`` or ``temporal schedule list -o json``,
the same protobuf JSON the SDK's raw description gives); :func:`read_file` and
:func:`read_server` (the ``temporalio`` SDK) are the only I/O. Each schedule
becomes one ``temporal:`` job (which starts the same workflow type on the same
task queue) and one cron per calendar or interval of its spec (the spec's
translation is :mod:`.temporal_spec`; policies, state and action are here).

| Temporal schedule                         | manifest                                                |
|-------------------------------------------|---------------------------------------------------------|
| spec: cron string / calendar (the server keeps them as ``structuredCalendar``) | ``cron`` (5 fields) in ``timezoneName`` (default UTC) |
| spec: ``interval`` + ``phase``            | ``every N …`` (epoch-anchored, like Temporal's); with a phase, crons of the same instants when the interval divides a day |
| spec: ``jitter``                          | ``jitter`` (whole seconds)                               |
| spec: ``startTime`` / ``endTime``         | ``start_at`` / ``end_at``                                |
| policies: overlap SKIP / BUFFER_ONE / ALLOW_ALL | ``overlap`` skip / buffer_one / allow               |
| policies: BUFFER_ALL / CANCEL_OTHER / TERMINATE_OTHER | buffer_one / cancel_running / cancel_running, with a note |
| policies: ``catchupWindow``               | ``misfire_grace`` (Temporal's default, a year: none)     |
| state: ``paused`` (+ ``notes``)           | ``enabled: false``, the notes in the report              |
| state: ``limitedActions`` + ``remainingActions`` | ``max_runs`` (none left: not translated)          |
| action: workflow type, task queue, id     | ``temporal:TYPE``, ``options.task_queue``, ``options.workflow_id`` |
| action: ``input`` (json/plain payloads)   | ``payload: {args: [...]}``                               |
| action: execution / run / task timeouts   | ``options.execution_timeout`` / ``run_timeout`` / ``task_timeout`` |

Not translated, with the reason: seconds other than :00, years, a calendar
restricting both day of month and day of week (Temporal requires both, cron
either), exclusions (``excludeStructuredCalendar``), an interval with a phase
that no set of crons repeats, input in another encoding than JSON, schedules
with no actions left. Reported, not carried: ``pauseOnFailure``, memo, search
attributes, headers, retry policy. Overlap is judged on cronplane's own items:
the importer sets ``options.wait`` unless the policy is ALLOW_ALL, so an item
lasts as long as its workflow.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from cronplane.core.fields import MAX_MISFIRE_GRACE
from cronplane.errors import InvalidRequest
from cronplane.importers.temporal_spec import (
    DAY,
    as_list,
    as_mapping,
    duration,
    spec_declarations,
    whole,
)
from cronplane.importers.translation import (
    Names,
    Skipped,
    Translation,
    Untranslatable,
    cron_name,
)
from cronplane.input_files import read_input_text

OVERLAP: Final = {
    "SCHEDULE_OVERLAP_POLICY_UNSPECIFIED": ("skip", None),
    "SCHEDULE_OVERLAP_POLICY_SKIP": ("skip", None),
    "SCHEDULE_OVERLAP_POLICY_BUFFER_ONE": ("buffer_one", None),
    "SCHEDULE_OVERLAP_POLICY_BUFFER_ALL": (
        "buffer_one",
        "overlap BUFFER_ALL: cronplane buffers at most one occurrence behind a running one",
    ),
    "SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER": (
        "cancel_running",
        "overlap CANCEL_OTHER: cronplane cancels its own running item, not the workflow it "
        "started; cancel the workflow from the workflow side if it must stop",
    ),
    "SCHEDULE_OVERLAP_POLICY_TERMINATE_OTHER": (
        "cancel_running",
        "overlap TERMINATE_OTHER: cronplane cancels its own running item, not the workflow "
        "it started (nothing is terminated)",
    ),
    "SCHEDULE_OVERLAP_POLICY_ALLOW_ALL": ("allow", None),
}
# Temporal's default catchup window: a year, i.e. "catch up whatever was missed".
DEFAULT_CATCHUP: Final = 365 * DAY
JSON_ENCODINGS: Final = frozenset({"json/plain"})


def _documents(text: str, source: str) -> list[Any]:
    """Every JSON value in `text` (one, or several one after another, as a shell loop of
    `temporal schedule describe` prints them)."""
    decoder = json.JSONDecoder()
    found: list[Any] = []
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index >= len(text):
            return found
        try:
            value, index = decoder.raw_decode(text, index)
        except ValueError as error:
            raise InvalidRequest(
                f"{source!r} is not the JSON of `temporal schedule describe|list -o json`: {error}",
                {"path": source},
            ) from error
        found.append(value)


def read_file(path: Path) -> list[dict[str, Any]]:
    """The schedules in a file of describe or list JSON, each as
    `{"scheduleId"?, "schedule"?, "info"?}`; InvalidRequest when it is not that JSON."""
    schedules: list[dict[str, Any]] = []
    values = _documents(read_input_text(path), str(path))
    for value in values:
        items = value if isinstance(value, list) else [value]
        for item in items:
            if not isinstance(item, dict):
                raise InvalidRequest(
                    f"{str(path)!r} holds {type(item).__name__}, not schedules", {"path": str(path)}
                )
            schedules.append(dict(item))
    # A lone describe document has no id: the file is named after the schedule, usually.
    if len(schedules) == 1 and "scheduleId" not in schedules[0] and "schedule" in schedules[0]:
        schedules[0]["scheduleId"] = path.stem
    return schedules


def read_server(address: str, namespace: str, ids: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Every schedule of `namespace` on the server at `address` (or those in `ids`), as
    describe prints them, with `scheduleId`; through the temporalio SDK."""
    import asyncio

    try:
        from google.protobuf.json_format import MessageToDict
        from temporalio.client import Client
    except ImportError as error:
        raise InvalidRequest(
            "--address needs the Temporal SDK: pip install 'cronplane[temporal]'", {}
        ) from error

    async def describe_all() -> list[dict[str, Any]]:
        client = await asyncio.wait_for(Client.connect(address, namespace=namespace), 15)
        wanted = list(ids)
        if not wanted:
            wanted = [entry.id async for entry in await client.list_schedules()]
        found = []
        for ident in wanted:
            described = await client.get_schedule_handle(ident).describe()
            document = MessageToDict(described.raw_description)
            found.append({"scheduleId": ident, **document})
        return found

    try:
        return asyncio.run(describe_all())
    except Exception as error:  # the SDK's errors: connection, RPC, not found
        raise InvalidRequest(
            f"cannot read schedules from Temporal at {address} (namespace {namespace}): "
            f"{type(error).__name__}: {error}",
            {"address": address, "namespace": namespace},
        ) from error


def translate(
    schedules: Iterable[Mapping[str, Any]],
    *,
    stack: str,
    namespace: str = "default",
    task_queue: str | None = None,
) -> Translation:
    """Translate Temporal schedules; `namespace` is theirs (it is not in the JSON) and
    `task_queue` the one to use where the document does not say (list output)."""
    jobs: dict[str, dict[str, Any]] = {}
    crons: dict[str, dict[str, Any]] = {}
    names = Names()
    skipped: list[Skipped] = []
    notes: list[str] = []
    for index, document in enumerate(schedules, start=1):
        ident = str(document.get("scheduleId") or _workflow_id(document) or f"schedule-{index}")
        try:
            job_spec, declarations, entry_notes = _schedule(document, namespace, task_queue)
        except Untranslatable as error:
            skipped.append(Skipped(ident, str(error)))
            continue
        name = names.claim(cron_name(ident, "schedule"))
        jobs[name] = job_spec
        for number, declared in enumerate(declarations):
            cron = name if number == 0 else names.claim(f"{name}-{number + 1}"[:64])
            crons[cron] = {"job": name, **declared}
        if len(declarations) > 1:
            entry_notes.append(
                f"written as {len(declarations)} crons of one job (one per calendar, interval "
                "or set of times of day); where two meet, Temporal starts once, cronplane twice"
            )
        notes += [f"{ident}: {note}" for note in entry_notes]
    document_out: dict[str, Any] = {
        "name": cron_name(stack, "temporal"),
        "jobs": jobs,
        "crons": crons,
    }
    if crons:
        notes.append(
            "temporal: jobs start the workflow on the cluster in CRONPLANE_TEMPORAL_ADDRESS "
            "(workers need the temporal extra); pause or delete the Temporal schedules "
            "before cronplane starts, or both will start them"
        )
    return Translation(
        document_out,
        skipped,
        notes,
        command="temporal",
        noun="schedules",
        translated=len(jobs),
    )


def _workflow_id(document: Mapping[str, Any]) -> str | None:
    """The action's workflow id, which names a describe document (it has no schedule id)."""
    schedule = document.get("schedule")
    action = schedule.get("action") if isinstance(schedule, Mapping) else None
    start = action.get("startWorkflow") if isinstance(action, Mapping) else None
    ident = start.get("workflowId") if isinstance(start, Mapping) else None
    return ident if isinstance(ident, str) and ident else None


def _schedule(
    document: Mapping[str, Any], namespace: str, default_queue: str | None
) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """(job spec, cron declarations, notes) of one schedule; Untranslatable otherwise."""
    notes: list[str] = []
    if "schedule" in document:  # describe
        schedule = as_mapping(document["schedule"], "schedule")
        spec = as_mapping(schedule.get("spec") or {}, "schedule.spec")
        policies = as_mapping(schedule.get("policies") or {}, "schedule.policies")
        state = as_mapping(schedule.get("state") or {}, "schedule.state")
        action = as_mapping(schedule.get("action") or {}, "schedule.action")
    else:  # list: the spec, the workflow type, the state; no action or policies
        info = as_mapping(document.get("info") or {}, "info")
        spec = as_mapping(info.get("spec") or {}, "info.spec")
        policies = {}
        state = {"paused": info.get("paused"), "notes": info.get("notes")}
        workflow_type = as_mapping(info.get("workflowType") or {}, "info.workflowType")
        action = {"startWorkflow": {"workflowType": workflow_type}}
        notes.append(
            "read from `schedule list` output, which has no policies, input or timeouts: "
            "Temporal's defaults are assumed (describe output carries them)"
        )
    declarations = spec_declarations(spec, notes)
    overlap, overlap_note = OVERLAP.get(
        str(policies.get("overlapPolicy") or "SCHEDULE_OVERLAP_POLICY_UNSPECIFIED"), (None, None)
    )
    if overlap is None:
        raise Untranslatable(f"overlap policy {policies.get('overlapPolicy')!r} is unknown")
    if overlap_note:
        notes.append(overlap_note)
    shared: dict[str, Any] = {"overlap": overlap}
    catchup = policies.get("catchupWindow")
    if catchup is not None:
        seconds = duration(catchup, "catchupWindow")
        if seconds < DEFAULT_CATCHUP and seconds <= MAX_MISFIRE_GRACE:
            shared["misfire_grace"] = max(1, round(seconds))
    if policies.get("pauseOnFailure"):
        notes.append(
            "pauseOnFailure not carried over: cronplane does not pause a schedule when a run "
            "fails (an alert can page on failures)"
        )
    if policies.get("keepOriginalWorkflowId"):
        notes.append("keepOriginalWorkflowId not carried over: ids always end in the instant")
    if state.get("paused"):
        shared["enabled"] = False
        said = f": {state['notes']}" if state.get("notes") else ""
        notes.append(f"paused in Temporal{said} (created disabled)")
    elif state.get("notes"):
        notes.append(f"Temporal notes: {state['notes']}")
    if state.get("limitedActions"):
        remaining = whole(state.get("remainingActions") or 0, "remainingActions")
        if remaining <= 0:
            raise Untranslatable("no actions left (limitedActions, remainingActions 0)")
        shared["max_runs"] = remaining
    job_spec, payload = _action(action, namespace, default_queue, overlap, notes)
    if payload:
        shared["payload"] = payload
    return job_spec, [{**declared, **shared} for declared in declarations], notes


def _action(
    action: Mapping[str, Any],
    namespace: str,
    default_queue: str | None,
    overlap: str,
    notes: list[str],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(job spec, payload) of a startWorkflow action."""
    start = action.get("startWorkflow")
    if not isinstance(start, Mapping):
        raise Untranslatable(f"action {sorted(action) or 'none'}: only startWorkflow translates")
    workflow = as_mapping(start.get("workflowType") or {}, "workflowType").get("name")
    if not isinstance(workflow, str) or not workflow:
        raise Untranslatable("the action has no workflow type")
    queue = as_mapping(start.get("taskQueue") or {}, "taskQueue").get("name") or default_queue
    if not isinstance(queue, str) or not queue:
        raise Untranslatable(
            "the task queue is not in this output (`schedule list` leaves it out): give "
            "--task-queue, or import `temporal schedule describe -o json` output"
        )
    options: dict[str, Any] = {"task_queue": queue, "namespace": namespace}
    if isinstance(start.get("workflowId"), str) and start["workflowId"]:
        options["workflow_id"] = start["workflowId"]
    for key, option in (
        ("workflowExecutionTimeout", "execution_timeout"),
        ("workflowRunTimeout", "run_timeout"),
        ("workflowTaskTimeout", "task_timeout"),
    ):
        seconds = duration(start.get(key) or "0s", key)
        if seconds > 0 and not (key == "workflowTaskTimeout" and seconds == 10):
            options[option] = seconds
    if overlap != "allow":
        options["wait"] = True  # an item lasts as long as its workflow: overlap judges it
    for key in ("memo", "searchAttributes", "retryPolicy", "header", "userMetadata"):
        value = start.get(key)
        if value and (not isinstance(value, Mapping) or any(value.values())):
            notes.append(f"action.{key} not carried over")
    payload: dict[str, Any] = {}
    args = [
        _payload(item)
        for item in as_list(as_mapping(start.get("input") or {}, "input").get("payloads"))
    ]
    if args:
        payload["args"] = args
    spec = {
        "title": f"Temporal workflow {workflow} on {queue}"[:200],
        "target": f"temporal:{workflow}",
        "options": options,
    }
    return spec, payload


def _payload(item: Any) -> Any:
    """One input payload's value (json/plain only: a codec's output cannot be read)."""
    item = as_mapping(item, "input payload")
    metadata = as_mapping(item.get("metadata") or {}, "payload metadata")
    try:
        encoding = base64.b64decode(str(metadata.get("encoding") or "")).decode()
        if encoding == "binary/null":
            return None
        if encoding not in JSON_ENCODINGS:
            raise Untranslatable(
                f"an input payload is encoded as {encoding!r} (a codec or protobuf): "
                "cronplane sends JSON"
            )
        return json.loads(base64.b64decode(str(item.get("data") or "")))
    except (binascii.Error, UnicodeDecodeError, ValueError) as error:
        raise Untranslatable(f"an input payload cannot be read: {error}") from error
