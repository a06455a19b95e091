"""deploy/kubernetes: every manifest passes kubernetes-validate (strict: no unknown
field) against the oldest and newest Kubernetes versions it knows; the ServiceMonitor,
a CRD with no schema there, is checked against the fields the Prometheus Operator
defines for what it uses; and the pieces fit together (selectors, ports, Secret keys,
command lines cronplane accepts, every file in the kustomization).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from podman_support import ROOT

from required_services import require_service

pytestmark = pytest.mark.deploy

HERE = ROOT / "deploy" / "kubernetes"
VERSIONS = ("1.25.0", "1.37.0")  # what kubernetes-validate 1.37 carries, oldest and newest
CRDS = {("monitoring.coreos.com/v1", "ServiceMonitor")}


def documents() -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(HERE.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            found[
                f"{doc['kind']}/{doc['metadata']['name'] if 'metadata' in doc else path.stem}"
            ] = doc
    return found


def validator() -> Any:
    try:
        import kubernetes_validate
    except ImportError as error:
        require_service("kubernetes-validate", error)
    return kubernetes_validate


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in documents().values() if d["kind"] == kind]


@pytest.mark.parametrize("version", VERSIONS)
def test_manifests_pass_kubernetes_validate(version: str) -> None:
    kv = validator()
    checked = []
    for doc in documents().values():
        if doc["kind"] == "Kustomization" or (doc["apiVersion"], doc["kind"]) in CRDS:
            continue
        kv.validate(doc, version, strict=True)  # raises ValidationError
        checked.append(doc["kind"])
    assert sorted(checked) == [
        "Deployment", "Deployment", "Job", "PodDisruptionBudget", "Secret", "Service",
        "ServiceAccount",
    ]  # fmt: skip


def test_validation_would_catch_a_mistake() -> None:
    kv = validator()
    (deployment, *_) = by_kind("Deployment")
    bad = yaml.safe_load(yaml.safe_dump(deployment))
    bad["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "8080"
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, VERSIONS[-1], strict=True)
    bad = yaml.safe_load(yaml.safe_dump(deployment))
    bad["spec"]["template"]["spec"]["containers"][0]["livenessProbe"]["httpGet"]["paht"] = "/"
    with pytest.raises(kv.ValidationError):
        kv.validate(bad, VERSIONS[-1], strict=True)


# The Prometheus Operator's ServiceMonitor fields this project uses (monitoring.coreos.com/v1),
# with the operator's types and enums; anything else in the file is refused.
SERVICE_MONITOR = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "monitoring.coreos.com/v1"},
        "kind": {"const": "ServiceMonitor"},
        "metadata": {
            "type": "object",
            "required": ["name"],
            "properties": {"name": {"type": "string"}, "labels": {"type": "object"}},
        },
        "spec": {
            "type": "object",
            "required": ["selector", "endpoints"],
            "additionalProperties": False,
            "properties": {
                "selector": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "matchLabels": {
                            "type": "object",
                            "additionalProperties": {"type": "string"},
                        }
                    },
                },
                "endpoints": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "port": {"type": "string"},
                            "path": {"type": "string"},
                            "interval": {"type": "string", "pattern": "^(0|(([0-9]+)(y|w|d|h|m|s|ms))+)$"},
                            "authorization": {
                                "type": "object",
                                "additionalProperties": False,
                                "properties": {
                                    "type": {"type": "string"},
                                    "credentials": {
                                        "type": "object",
                                        "required": ["key"],
                                        "additionalProperties": False,
                                        "properties": {
                                            "name": {"type": "string"},
                                            "key": {"type": "string"},
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}  # fmt: skip


def test_servicemonitor_is_structurally_right_and_scrapes_the_service() -> None:
    (monitor,) = by_kind("ServiceMonitor")
    jsonschema.validate(monitor, SERVICE_MONITOR)
    (service,) = by_kind("Service")
    (secret,) = by_kind("Secret")
    labels = service["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= labels.items()
    ports = {p["name"] for p in service["spec"]["ports"]}
    for endpoint in monitor["spec"]["endpoints"]:
        assert endpoint["port"] in ports and endpoint["path"] == "/metrics"
        credentials = endpoint["authorization"]["credentials"]
        assert credentials["name"] == secret["metadata"]["name"]
        assert credentials["key"] in secret["stringData"]


def test_the_pieces_fit() -> None:
    docs = documents()
    kustomization = docs["Kustomization/kustomization"]
    listed = set(kustomization["resources"])
    files = {p.name for p in HERE.glob("*.yaml")} - {"kustomization.yaml"}
    # Every manifest is applied by the kustomization except the example Secret.
    assert files - listed == {"secret.example.yaml"} and listed <= files

    (secret,) = by_kind("Secret")
    serve = docs["Deployment/cronplane-serve"]
    pods = {"serve": serve, "worker": docs["Deployment/cronplane-worker"]}
    pods["migrate"] = docs["Job/cronplane-migrate"]
    for deployment in (serve, pods["worker"]):
        template = deployment["spec"]["template"]["metadata"]["labels"]
        assert deployment["spec"]["selector"]["matchLabels"].items() <= template.items()
    serve_labels = serve["spec"]["template"]["metadata"]["labels"]
    for selector in (
        docs["Service/cronplane"]["spec"]["selector"],
        docs["PodDisruptionBudget/cronplane-serve"]["spec"]["selector"]["matchLabels"],
    ):
        assert selector.items() <= serve_labels.items()
    named = {p["name"] for c in serve["spec"]["template"]["spec"]["containers"] for p in c["ports"]}
    assert docs["Service/cronplane"]["spec"]["ports"][0]["targetPort"] in named
    assert serve["spec"]["replicas"] >= 2  # a standby dispatcher
    assert docs["PodDisruptionBudget/cronplane-serve"]["spec"]["minAvailable"] == 1

    for kind, pod in pods.items():
        spec = pod["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True
        assert spec["automountServiceAccountToken"] is False  # no Kubernetes API: no Lease
        for container in spec["containers"]:
            assert container["image"] == "cronplane"  # the kustomization's images: sets it
            assert container["securityContext"]["readOnlyRootFilesystem"] is True
            for env in container["env"]:
                ref = env["valueFrom"]["secretKeyRef"]
                assert ref["name"] == secret["metadata"]["name"]
                assert ref["key"] in secret["stringData"], (kind, ref)
            cli = Path(sys.executable).with_name("cronplane")
            done = subprocess.run(
                [str(cli), *container["args"], "--help"], capture_output=True, text=True
            )
            assert done.returncode == 0, (kind, done.stderr)
