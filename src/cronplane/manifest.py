"""App manifests (`app.yaml`, SPEC §5): load, check every entry, report every problem.

The loader never stops at the first problem: it collects each one with its
path (`crons.nightly-report.cron: X400001CRNINV …`) and raises one
InvalidManifest whose detail lists them all, so nothing is applied from a
manifest that is invalid anywhere. What needs the database (does a cron's job
exist in the stack, the five-year rule in the schedule's real scope) is
checked again by the service, which reports with the same paths.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

from cronplane.core import target_rules, validation, yaml_bounds
from cronplane.core.alert_rules import check_rule
from cronplane.core.alerts import DEFAULT_RENOTIFY, RuleSpec
from cronplane.core.declared import manifest_defaults
from cronplane.core.edits import check_field
from cronplane.core.fields import DECLARED_FIELDS
from cronplane.core.inputs import CronDeclaration, JobSpec
from cronplane.core.labels import validate_labels
from cronplane.errors import CronplaneError, InputFileTooLarge, InvalidManifest
from cronplane.input_files import MAX_INPUT_BYTES, read_input

# The cap the importers share (input_files); the YAML limits are core.yaml_bounds'.
MAX_MANIFEST_BYTES = MAX_INPUT_BYTES
JOB_KEYS = frozenset(
    {"title", "target", "kind", "payload", "schema", "options", "status", "labels"}
)
# `enabled`: the state a new row is created in, never synced afterwards (not declared).
CRON_KEYS = frozenset(DECLARED_FIELDS) | {"enabled", "dst"}
# A cron's `dst: {gap, repeat}`: the fields dst_gap and dst_repeat (core.dst).
DST_KEYS = frozenset({"gap", "repeat"})
TOP_KEYS = frozenset({"name", "jobs", "crons", "alerts", "version", "description", "labels"})
ALERT_KEYS = frozenset({"condition", "cron", "job", "threshold", "reasons", "channels", "renotify"})

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Manifest:
    """A checked manifest: the stack's name, its jobs and its crons, by name."""

    name: str
    jobs: dict[str, JobSpec] = field(default_factory=dict)
    crons: dict[str, CronDeclaration] = field(default_factory=dict)
    # Alert rules for the app's schedules, by name (docs/alerts.md): scope is one
    # declared cron (`cron:`), one job's crons (`job:`), or the whole app.
    alerts: dict[str, AppAlert] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AppAlert:
    """An alert rule a manifest declares; the stack and environment are the install's."""

    condition: str
    cron: str | None = None
    job: str | None = None
    threshold: int | None = None
    reasons: tuple[str, ...] = ()
    channels: tuple[str, ...] = ()
    renotify: int = DEFAULT_RENOTIFY

    def spec(self, name: str, stack: str, environment: str) -> RuleSpec:
        """The rule this declaration stands for, installed in (stack, environment)."""
        scope = "schedule" if self.cron else "job" if self.job else "stack"
        return RuleSpec(
            name=app_rule_name(stack, environment, name),
            condition=self.condition,
            scope=scope,
            stack=stack,
            environment=environment,
            target=self.cron or self.job,
            threshold=self.threshold,
            reasons=self.reasons,
            channels=self.channels,
            renotify=self.renotify,
        )


def app_rule_name(stack: str, environment: str, name: str) -> str:
    """The tenant-wide name of an app's rule: `<stack>.<environment>.<name>`."""
    return f"{stack}.{environment}.{name}"


class _Problems:
    """Collects `path: CODE message` lines."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def add(self, path: str, error: CronplaneError) -> None:
        self.lines.append(f"{path}: {error.code.text} {error.message}")

    def check(self, path: str, check: Callable[..., T], *args: Any) -> T | None:
        """Run `check(*args)`; on a coded error, record it and return None."""
        try:
            return check(*args)
        except CronplaneError as error:
            self.add(path, error)
            return None


def load_manifest(path: str | Path) -> Manifest:
    """Read and check an app.yaml file."""
    file = Path(path)
    try:
        raw = read_input(file)
    except OSError as error:
        raise InvalidManifest(
            f"cannot read manifest {str(file)!r}: {error.strerror}", {"problems": []}
        ) from error
    return parse_manifest(raw, source=str(file))


def parse_manifest(text: str | bytes, source: str = "app.yaml") -> Manifest:
    """Parse YAML (core.yaml_bounds) and check it; InvalidManifest lists every problem.

    YamlOverLimit and YamlDuplicateKey pass through with their own codes, and
    InputFileTooLarge over MAX_MANIFEST_BYTES.
    """
    if len(text) > MAX_MANIFEST_BYTES:
        raise InputFileTooLarge(
            f"{source} is larger than {MAX_MANIFEST_BYTES} bytes",
            {"path": source, "limit": MAX_MANIFEST_BYTES},
        )
    try:
        data = yaml_bounds.load_one(text, source)
    except yaml.YAMLError as error:
        problem = f"(yaml): {error}"
        raise InvalidManifest(f"{source} is not valid YAML", {"problems": [problem]}) from error
    return manifest_from_data(data, source=source)


def manifest_from_data(data: object, source: str = "app.yaml") -> Manifest:
    """Check an already-decoded manifest document (the API posts JSON)."""
    problems = _Problems()
    if not isinstance(data, dict):
        raise InvalidManifest(
            f"{source} must be a mapping with name, jobs and crons",
            {"problems": ["(root): must be a mapping"]},
        )
    for key in sorted(set(map(str, data)) - TOP_KEYS):
        problems.lines.append(f"{key}: unknown key (expected one of {', '.join(sorted(TOP_KEYS))})")
    name = problems.check("name", validation.validate_name, data.get("name"), "name")
    jobs = _jobs(data.get("jobs") or {}, problems)
    # The app's labels apply to each of its crons; a cron's own add to them (and win).
    app_labels = problems.check("labels", validate_labels, data.get("labels")) or {}
    crons = _crons(data.get("crons") or {}, jobs, problems, app_labels)
    alerts = _alerts(data.get("alerts") or {}, str(name), jobs, crons, problems)
    if problems.lines:
        count = len(problems.lines)
        raise InvalidManifest(
            f"{source} has {count} problem{'s' if count != 1 else ''}: {problems.lines[0]}"
            + (" …" if count > 1 else ""),
            {"problems": problems.lines},
        )
    assert name is not None
    return Manifest(name=name, jobs=jobs, crons=crons, alerts=alerts)


def _mapping(value: object, path: str, problems: _Problems) -> Mapping[str, Any]:
    if isinstance(value, dict):
        return {str(key): item for key, item in value.items()}
    problems.lines.append(f"{path}: must be a mapping")
    return {}


def _unknown(entry: Mapping[str, Any], allowed: frozenset[str], path: str, p: _Problems) -> None:
    for key in sorted(set(entry) - allowed):
        p.lines.append(f"{path}.{key}: unknown key (expected one of {', '.join(sorted(allowed))})")


def _flat_dst(entry: Mapping[str, Any], path: str, problems: _Problems) -> Mapping[str, Any]:
    """`dst: {gap: …, repeat: …}` as the fields `dst_gap`, `dst_repeat` (which a cron may
    also give as they are, as the API's sync body does)."""
    if "dst" not in entry:
        return entry
    nested = _mapping(entry["dst"], f"{path}.dst", problems)
    _unknown(nested, DST_KEYS, f"{path}.dst", problems)
    flat = {key: value for key, value in entry.items() if key != "dst"}
    flat.update({f"dst_{key}": value for key, value in nested.items() if key in DST_KEYS})
    return flat


def _jobs(value: object, problems: _Problems) -> dict[str, JobSpec]:
    jobs: dict[str, JobSpec] = {}
    for name, raw in _mapping(value, "jobs", problems).items():
        path = f"jobs.{name}"
        ok = problems.check(path, validation.validate_name, name, "job name")
        entry = _mapping(raw, path, problems)
        _unknown(entry, JOB_KEYS, path, problems)
        before = len(problems.lines)
        target = entry.get("target")
        kind = problems.check(f"{path}.target", target_rules.validate_target, target)
        title = problems.check(f"{path}.title", validation.validate_title, entry.get("title", ""))
        payload = problems.check(
            f"{path}.payload", validation.validate_payload, entry.get("payload", {})
        )
        schema = None
        if entry.get("schema") is not None:
            schema = problems.check(f"{path}.schema", validation.validate_schema, entry["schema"])
        options = problems.check(
            f"{path}.options", validation.validate_payload, entry.get("options", {}), "options"
        )
        if options is not None:
            problems.check(f"{path}.options", validation.validate_run_options, options)
        if kind == "webhook" and options is not None:
            problems.check(f"{path}.options.secret", validation.validate_secret_option, options)
        # A job's own labels (the app's `labels:` are its crons').
        labels = problems.check(f"{path}.labels", validate_labels, entry.get("labels") or {})
        status = entry.get("status", "active")
        if status not in ("active", "inactive"):
            problems.lines.append(f"{path}.status: must be active or inactive")
        if payload is not None and schema is not None:
            problems.check(f"{path}.payload", validation.validate_against_schema, payload, schema)
        if ok is None or len(problems.lines) > before:
            continue
        assert isinstance(target, str) and title is not None and payload is not None
        jobs[name] = JobSpec(
            name=name,
            target=target,
            title=title,
            kind=str(entry.get("kind") or kind),
            payload=payload,
            payload_schema=schema,
            options=options or {},
            status="inactive" if status == "inactive" else "active",
            labels=labels or {},
        )
    return jobs


def _crons(
    value: object,
    jobs: Mapping[str, JobSpec],
    problems: _Problems,
    app_labels: Mapping[str, str],
) -> dict[str, CronDeclaration]:
    crons: dict[str, CronDeclaration] = {}
    for name, raw in _mapping(value, "crons", problems).items():
        path = f"crons.{name}"
        before = len(problems.lines)
        problems.check(path, validation.validate_name, name, "cron name")
        # Short form `name: "expr"` (job = name) or the long form mapping.
        entry: Mapping[str, Any] = (
            {"cron": raw} if isinstance(raw, str) else _mapping(raw, path, problems)
        )
        _unknown(entry, CRON_KEYS, path, problems)
        entry = _flat_dst(entry, path, problems)
        # An omitted key means its default (a fresh one: core.fields); `job`: the cron's name.
        values: dict[str, Any] = {**manifest_defaults(), "job": name, **entry}
        if app_labels and isinstance(values["labels"], Mapping):
            values["labels"] = {**app_labels, **values["labels"]}
        for key in DECLARED_FIELDS:
            value = values.get(key)
            if value is None and key == "cron":
                problems.lines.append(f"{path}.cron: required")
                continue
            if value is None and key == "payload":
                continue  # the job's default payload
            # The real seed of a cron is the schedule's identity, known only at
            # sync time; any seed tells whether the expression parses.
            checked = problems.check(f"{path}.{key}", check_field, key, value, name)
            spec = jobs.get(str(values["job"]))
            if key == "payload" and checked is not None and spec is not None:
                problems.check(
                    f"{path}.payload",
                    validation.validate_against_schema,
                    checked,
                    spec.payload_schema,
                )
        if not isinstance(values["enabled"], bool):
            problems.lines.append(f"{path}.enabled: must be true or false")
        if len(problems.lines) > before:
            continue
        declared: dict[str, Any] = {key: values.get(key) for key in DECLARED_FIELDS}
        crons[name] = CronDeclaration(**declared, enabled=values["enabled"])
    return crons


def _alerts(
    value: object,
    stack: str,
    jobs: Mapping[str, JobSpec],
    crons: Mapping[str, CronDeclaration],
    problems: _Problems,
) -> dict[str, AppAlert]:
    found: dict[str, AppAlert] = {}
    for name, raw in _mapping(value, "alerts", problems).items():
        path = f"alerts.{name}"
        before = len(problems.lines)
        entry = _mapping(raw, path, problems)
        _unknown(entry, ALERT_KEYS, path, problems)
        cron, job = entry.get("cron"), entry.get("job")
        if cron is not None and job is not None:
            problems.lines.append(f"{path}: name a cron or a job, not both")
        if cron is not None and cron not in crons:
            problems.lines.append(f"{path}.cron: {cron!r} is not one of the manifest's crons")
        if job is not None and job not in jobs:
            problems.lines.append(f"{path}.job: {job!r} is not one of the manifest's jobs")
        lists = {}
        for key in ("reasons", "channels"):
            items = entry.get(key, [])
            if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
                problems.lines.append(f"{path}.{key}: must be a list of names")
                items = []
            lists[key] = tuple(items)
        declared = AppAlert(
            condition=str(entry.get("condition", "")),
            cron=cron if isinstance(cron, str) else None,
            job=job if isinstance(job, str) else None,
            threshold=entry.get("threshold"),
            reasons=lists["reasons"],
            channels=lists["channels"],
            renotify=entry.get("renotify", DEFAULT_RENOTIFY),
        )
        # Any environment name checks the rule; the installed name is checked again.
        spec = declared.spec(name, stack, "default")
        problems.check(path, validation.validate_name, name, "alert name")
        problems.check(path, check_rule, spec)
        if len(problems.lines) == before:
            found[name] = declared
    return found
