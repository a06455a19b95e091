"""`cronplane import kubernetes`: CronJob manifests, what installs, when it fires (cronsim)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from cli_process import run_cronplane
from cronsim import CronSim
from hypothesis import given, settings
from hypothesis import strategies as st
from importer_support import ENVIRONMENT, TENANT, fired, install, instants

from cronplane.clock import FakeClock
from cronplane.core.model import Scope
from cronplane.errors import InvalidRequest
from cronplane.importers.kubernetes import read_documents, translate
from cronplane.importers.kubernetes_pod import KINDS
from cronplane.manifest import manifest_from_data
from cronplane.store.database import Database
from cronplane.targets.container import engine_arguments

CRONJOBS = """
apiVersion: batch/v1
kind: CronJob
metadata: {name: invoices, namespace: billing}
spec:
  schedule: "30 2 * * 1-5"
  timeZone: Europe/Berlin
  concurrencyPolicy: Forbid
  startingDeadlineSeconds: 300
  successfulJobsHistoryLimit: 3
  jobTemplate:
    spec:
      backoffLimit: 2
      activeDeadlineSeconds: 600
      template:
        spec:
          restartPolicy: OnFailure
          volumes: [{name: data, emptyDir: {}}]
          containers:
            - name: send
              image: registry.example.com/billing:1.4
              imagePullPolicy: Always
              command: ["/app/send-invoices"]
              args: ["--batch", "100", "--note", "it's due"]
              workingDir: /app
              env:
                - {name: MODE, value: live}
                - name: TOKEN
                  valueFrom: {secretKeyRef: {name: billing, key: token}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cleanup}
spec:
  schedule: "*/30 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: c, image: busybox, command: [sh, -c, "rm -rf /tmp/cache/*"]}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: paused-report}
spec:
  schedule: "@daily"
  suspend: true
  concurrencyPolicy: Allow
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: r, image: report:2, args: [report, --daily]}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: every-five}
spec:
  schedule: "@every 5m"
  jobTemplate: {spec: {template: {spec: {containers: [{name: a, image: a, command: [a]}]}}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: sidecars}
spec:
  schedule: "0 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
            - {name: main, image: m, command: [m]}
            - {name: proxy, image: envoy}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: entrypoint-only}
spec:
  schedule: "0 3 * * *"
  jobTemplate: {spec: {template: {spec: {containers: [{name: e, image: "backup:7"}]}}}}
"""

LISTED = """
apiVersion: v1
kind: List
items:
  - apiVersion: batch/v1
    kind: CronJob
    metadata: {name: london-digest}
    spec:
      schedule: "15 1 * * *"
      timeZone: Europe/London
      jobTemplate: {spec: {template: {spec: {containers: [{name: d, image: d, command: [digest]}]}}}}
"""

# name -> (schedule as Kubernetes reads it, zone); @daily is `0 0 * * *` (robfig/cron).
FIRING = {
    "invoices": ("30 2 * * 1-5", "Europe/Berlin"),
    "cleanup": ("*/30 * * * *", "UTC"),
    "london-digest": ("15 1 * * *", "Europe/London"),
}
SKIPPED = {
    "default/every-five": "counts @every from the controller's last run",
    "default/sidecars": "the pod has 2 containers (main, proxy)",
}
# `--as command`: a host command needs the command the image's entrypoint would run.
SKIPPED_AS_COMMAND = {**SKIPPED, "default/entrypoint-only": "neither command nor args"}


@pytest.fixture
def manifests(tmp_path: Path) -> Path:
    folder = tmp_path / "k8s"
    (folder / "nested").mkdir(parents=True)
    (folder / "cronjobs.yaml").write_text(CRONJOBS)
    (folder / "nested" / "list.yml").write_text(LISTED)
    (folder / "README.md").write_text("not yaml: ignored")
    return folder


def test_every_cronjob_is_translated_or_listed(manifests: Path) -> None:
    """The default: each CronJob keeps running in its image (a container: target)."""
    translation = translate(read_documents(manifests)[0], stack="k8s")
    crons, jobs = translation.document["crons"], translation.document["jobs"]
    assert set(crons) == {
        "invoices",
        "cleanup",
        "paused-report",
        "london-digest",
        "entrypoint-only",
    }
    skipped = {item.name.split(" (")[0]: item.reason for item in translation.skipped}
    assert skipped.keys() == SKIPPED.keys()
    for name, reason in SKIPPED.items():
        assert reason in skipped[name], name
    assert crons["invoices"] == {
        "job": "invoices",
        "cron": "30 2 * * 1-5",
        "timezone": "Europe/Berlin",
        "overlap": "skip",  # Forbid
        "misfire_grace": 300,  # startingDeadlineSeconds
    }
    assert crons["cleanup"]["overlap"] == "allow"  # Kubernetes' default policy
    assert crons["paused-report"]["enabled"] is False  # suspend: true
    invoices = jobs["invoices"]
    assert invoices["target"] == "container:registry.example.com/billing:1.4"
    assert invoices["options"] == {
        "command": ["/app/send-invoices"],  # Kubernetes' command: the entrypoint replaced
        "args": ["--batch", "100", "--note", "it's due"],  # as given, no shell in between
        "env": {"MODE": "live"},
        "pull": "always",  # imagePullPolicy: Always
        "max_attempts": 3,  # backoffLimit 2
        "timeout": 600,  # activeDeadlineSeconds
    }
    assert invoices["title"] == "CronJob billing/invoices: image registry.example.com/billing:1.4"
    # The engine runs what the kubelet would: entrypoint replaced by command, then args.
    image = invoices["target"].removeprefix("container:")
    argv = engine_arguments(image, invoices["options"], "n", ["MODE"])
    assert argv[-7:] == ["--entrypoint", "/app/send-invoices", image, *invoices["options"]["args"]]
    assert jobs["cleanup"]["options"]["command"] == ["sh", "-c", "rm -rf /tmp/cache/*"]
    assert jobs["cleanup"]["options"]["max_attempts"] == 7  # backoffLimit defaults to 6
    # args without command go to the image's ENTRYPOINT, as in the pod.
    assert jobs["paused-report"]["options"] == {"args": ["report", "--daily"], "max_attempts": 7}
    # Neither: the image's entrypoint runs, as in the pod.
    assert jobs["entrypoint-only"] == {
        "title": "CronJob default/entrypoint-only: image backup:7",
        "target": "container:backup:7",
        "options": {"max_attempts": 7},
    }
    notes = "\n".join(translation.notes)
    assert "billing/invoices: env TOKEN come from secrets" in notes
    assert "set them in the job's options.env" in notes
    assert "billing/invoices: workingDir /app not carried over" in notes
    assert "billing/invoices: not carried over (a container: run has none): volumes" in notes
    assert "documents that are not CronJobs were ignored: 1 Deployment" in notes
    assert "each container became a container: target" in notes
    assert "container: jobs need CRONPLANE_ALLOW_COMMAND_TARGETS=1" in notes


def test_as_command_writes_host_commands(manifests: Path) -> None:
    """`--as command`: the container's command as a command: line on a worker's host."""
    translation = translate(read_documents(manifests)[0], stack="k8s", as_kind="command")
    crons, jobs = translation.document["crons"], translation.document["jobs"]
    assert set(crons) == {"invoices", "cleanup", "paused-report", "london-digest"}
    skipped = {item.name.split(" (")[0]: item.reason for item in translation.skipped}
    assert skipped.keys() == SKIPPED_AS_COMMAND.keys()
    for name, reason in SKIPPED_AS_COMMAND.items():
        assert reason in skipped[name], name
    invoices = jobs["invoices"]
    assert invoices["target"] == ("command:/app/send-invoices --batch 100 --note 'it'\"'\"'s due'")
    assert invoices["options"] == {
        "image": "registry.example.com/billing:1.4",
        "container": "send",
        "namespace": "billing",
        "max_attempts": 3,  # backoffLimit 2
        "timeout": 600,  # activeDeadlineSeconds
        "env": {"MODE": "live"},
        "cwd": "/app",
    }
    assert "image registry.example.com/billing:1.4" in invoices["title"]
    # `sh -c SCRIPT`: the script is the line (command: runs it with /bin/sh -c)
    assert jobs["cleanup"]["target"] == "command:rm -rf /tmp/cache/*"
    assert "shell" not in jobs["cleanup"]["options"]
    assert jobs["cleanup"]["options"]["max_attempts"] == 7  # backoffLimit defaults to 6
    notes = "\n".join(translation.notes)
    assert "billing/invoices: env TOKEN come from secrets" in notes
    assert "set them in the workers' environment" in notes
    assert "billing/invoices: not carried over (a command: run has none): volumes" in notes
    assert "ON A CRONPLANE WORKER'S HOST" in notes
    assert "command: jobs need CRONPLANE_ALLOW_COMMAND_TARGETS=1" in notes


def test_variables_in_a_container_command_are_expanded_as_kubernetes_does() -> None:
    document = yaml.safe_load(CRONJOBS.split("---")[0])
    container = document["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    container["args"] = ["--mode=$(MODE)", "$$(MODE)", "$(TOKEN)", "$(UNKNOWN)"]
    translation = translate([("x.yaml", document)], stack="k8s")
    options = translation.document["jobs"]["invoices"]["options"]
    assert options["args"] == ["--mode=live", "$(MODE)", "$(TOKEN)", "$(UNKNOWN)"]
    assert any("$(TOKEN) in the command" in note for note in translation.notes)


def test_what_a_container_run_cannot_take_is_noted_or_listed() -> None:
    document = yaml.safe_load(CRONJOBS.split("---")[1])
    container = document["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    # Kubernetes allows `-` and `.` in a variable's name; the container: target does not.
    container["env"] = [{"name": "LOG-LEVEL", "value": "x"}, {"name": "MODE", "value": "y"}]
    translation = translate([("x.yaml", document)], stack="k8s")
    assert translation.document["jobs"]["cleanup"]["options"]["env"] == {"MODE": "y"}
    assert any("env LOG-LEVEL not carried over" in note for note in translation.notes)
    del container["image"]
    translation = translate([("x.yaml", document)], stack="k8s")
    assert translation.document["crons"] == {}
    assert "the container has no image" in translation.skipped[0].reason


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(InvalidRequest):
        translate([], stack="k8s", as_kind="pod")


def test_replace_becomes_cancel_running() -> None:
    document = yaml.safe_load(CRONJOBS.split("---")[1])
    document["spec"]["concurrencyPolicy"] = "Replace"
    translation = translate([("x.yaml", document)], stack="k8s")
    assert translation.document["crons"]["cleanup"]["overlap"] == "cancel_running"


def test_replace_installs(database: Database) -> None:
    """Needs the `cancel_running` overlap (helper "runs"): passes once it is merged."""
    document = yaml.safe_load(CRONJOBS.split("---")[1])
    document["spec"]["concurrencyPolicy"] = "Replace"
    translation = translate([("x.yaml", document)], stack="k8s")
    service, _ = install(database, translation, FakeClock(datetime(2026, 3, 27, tzinfo=UTC)))
    row = service.get_schedule(Scope(TENANT, "k8s", ENVIRONMENT), "cleanup")
    assert row.overlap == "cancel_running"


def test_output_installs_and_fires_when_kubernetes_would(
    database: Database, manifests: Path
) -> None:
    """On both databases: the due instants over six days across the European DST change
    are cronsim's for the same schedules and zones; a suspended CronJob never fires."""
    translation = translate(read_documents(manifests)[0], stack="k8s")
    start = datetime(2026, 3, 27, 0, 0, tzinfo=UTC)
    until = datetime(2026, 4, 2, 0, 0, tzinfo=UTC)
    clock = FakeClock(start)
    service, report = install(database, translation, clock)
    assert len(report.plan.created) == 5
    scope = Scope(TENANT, "k8s", ENVIRONMENT)
    job = service.get_job(TENANT, "k8s", "invoices")
    assert job.kind == "container" and job.target == "container:registry.example.com/billing:1.4"
    paused = service.get_schedule(scope, "paused-report")
    assert not paused.enabled and paused.next_run is None
    invoices = service.get_schedule(scope, "invoices")
    assert invoices.misfire_grace == 300 and invoices.overlap == "skip"
    seen = fired(database, clock, until)
    assert "paused-report" not in seen
    for name, (schedule, zone) in FIRING.items():
        expected = instants(CronSim(schedule, start.astimezone(ZoneInfo(zone))), until)
        assert seen.get(name, []) == [t.astimezone(UTC) for t in expected], name
    assert len(seen["invoices"]) == 4 and len(seen["cleanup"]) == 6 * 48


def test_cli_reads_a_directory_and_is_strict(manifests: Path, tmp_path: Path) -> None:
    output = tmp_path / "app.yaml"
    done = run_cronplane(
        "import", "kubernetes", str(manifests), "-o", str(output), env={}, cwd=tmp_path
    )
    assert done.code == 0, done.stderr
    assert "not translated: default/sidecars" in done.stderr
    assert "note: each container became a container: target" in done.stderr
    text = output.read_text()
    assert "# 5 of 7 CronJobs translated." in text
    assert "#   - default/sidecars" in text
    assert yaml.safe_load(text)["name"] == manifests.name
    assert yaml.safe_load(text)["jobs"]["entrypoint-only"]["target"] == "container:backup:7"
    hosted = run_cronplane(
        "import", "kubernetes", str(manifests), "--as", "command", env={}, cwd=tmp_path
    )
    assert hosted.code == 0, hosted.stderr
    assert "# 4 of 7 CronJobs translated." in hosted.stdout
    assert "#   - default/entrypoint-only" in hosted.stdout
    assert "note: each container became a command: target" in hosted.stderr
    assert (
        yaml.safe_load(hosted.stdout)["jobs"]["cleanup"]["target"] == "command:rm -rf /tmp/cache/*"
    )
    strict = run_cronplane(
        "import",
        "kubernetes",
        str(manifests / "nested" / "list.yml"),
        "--strict",
        env={},
        cwd=tmp_path,
    )
    assert strict.code == 0, strict.stderr  # nothing left out of this file
    strict = run_cronplane("import", "kubernetes", str(manifests), "--strict", env={}, cwd=tmp_path)
    assert strict.code == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [unclosed")
    refused = run_cronplane("import", "kubernetes", str(bad), env={}, cwd=tmp_path)
    assert refused.code == 2 and "X400007REQINV" in refused.stderr


CRONJOB = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["batch/v1", "batch/v2alpha9"]),
        "kind": st.just("CronJob"),
        "metadata": st.fixed_dictionaries({"name": st.sampled_from(["a", "a", "b.c", "x y"])}),
        "spec": st.fixed_dictionaries(
            {
                "schedule": st.sampled_from(["*/5 * * * *", "@daily", "@every 1h", "99 * * * *"]),
                "jobTemplate": st.fixed_dictionaries(
                    {
                        "spec": st.fixed_dictionaries(
                            {
                                "template": st.fixed_dictionaries(
                                    {
                                        "spec": st.fixed_dictionaries(
                                            {
                                                "containers": st.lists(
                                                    st.fixed_dictionaries(
                                                        {"image": st.just("i")},
                                                        optional={
                                                            "command": st.lists(
                                                                st.sampled_from(
                                                                    ["run", "a b", "'"]
                                                                ),
                                                                max_size=3,
                                                            )
                                                        },
                                                    ),
                                                    max_size=2,
                                                )
                                            }
                                        )
                                    }
                                )
                            }
                        )
                    }
                ),
            },
            optional={
                "timeZone": st.sampled_from(["Europe/Berlin", "Mars/Base"]),
                "suspend": st.booleans(),
                "concurrencyPolicy": st.sampled_from(["Allow", "Forbid", "Sometimes"]),
                "startingDeadlineSeconds": st.sampled_from([0, 30, -1]),
            },
        ),
    }
)


@settings(max_examples=150, deadline=None)
@given(st.lists(CRONJOB, max_size=6))
def test_every_cronjob_is_a_cron_or_listed_and_the_output_loads(jobs: list[object]) -> None:
    for kind in KINDS:
        translation = translate([("f.yaml", job) for job in jobs], stack="k8s", as_kind=kind)
        assert len(translation.document["crons"]) + len(translation.skipped) == len(jobs)
        manifest_from_data(translation.document)


def test_the_cli_offers_the_importer_kinds(tmp_path: Path) -> None:
    """`--as` lists importers.kubernetes_pod.KINDS (written out in the CLI, which loads
    the importer only when the command runs); container is the default."""
    done = run_cronplane("import", "kubernetes", "--help", env={}, cwd=tmp_path)
    assert done.code == 0
    assert f"[{'|'.join(KINDS)}]" in done.stdout and "default: container" in done.stdout
