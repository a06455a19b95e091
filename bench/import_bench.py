"""Importer and manifest inputs, hostile and large: seconds and peak memory of each (issue 33).

Each case runs in its own interpreter (peak RSS is the process's `ru_maxrss`,
less the interpreter's after imports); the source under test is whatever
`cronplane` imports, so the same script measures another checkout with
``PYTHONPATH=/that/checkout/src``::

    .venv/bin/python bench/import_bench.py
    PYTHONPATH=/work/main/src .venv/bin/python bench/import_bench.py

An error is shown by its class and code (or first words): a refusal is a result.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

CASE = r"""
import json, resource, sys, time
from pathlib import Path
import cronplane.manifest as manifest
from cronplane.importers import crontab, kubernetes
case, path = sys.argv[1], Path(sys.argv[2])
sys.setrecursionlimit(1000)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
try:
    if case.startswith("crontab"):
        crontab.translate(crontab.read_text(path), stack="bench").to_yaml()
    elif case.startswith("kubernetes"):
        kubernetes.translate(kubernetes.read_documents(path), stack="bench").to_yaml()
    else:
        manifest.load_manifest(path)
    outcome = "ok"
except BaseException as error:
    code = getattr(getattr(error, "code", None), "text", None)
    outcome = type(error).__name__ + (f" {code}" if code else f": {str(error)[:40]!r}")
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base
print(json.dumps({"seconds": elapsed, "peak_mb": peak / 1024, "outcome": outcome}))
"""

CRONJOB = """apiVersion: batch/v1
kind: CronJob
metadata: {name: *l7}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: c, image: busybox, command: [sh, -c, "true"]}]
"""


def billion_laughs(levels: int = 7, fan: int = 9) -> str:
    """`levels` anchors, each `fan` aliases of the one before (the issue's bomb)."""
    lines = ["a: &a [" + ", ".join(['"lol"'] * fan) + "]"]
    for index in range(1, levels + 1):
        previous = "a" if index == 1 else f"l{index - 1}"
        lines.append(f"l{index}: &l{index} [" + ", ".join([f"*{previous}"] * fan) + "]")
    return "\n".join(lines) + "\n"


def cases() -> dict[str, str]:
    """Name -> file content."""
    return {
        "crontab 10k lines": "*/5 * * * * /usr/local/bin/job.sh\n" * 10_000,
        "crontab 100k lines": "*/5 * * * * /usr/local/bin/job.sh\n" * 100_000,
        # The bomb's anchors and a CronJob whose env aliases its top: one document.
        "kubernetes alias bomb (7 levels x 9)": billion_laughs() + CRONJOB,
        "kubernetes 5,000-deep [": "[" * 5000,
        "manifest 5,000-digit int": "name: shop\njobs:\n  j: {target: 'python:m:f', payload: {n: "
        + "7" * 5000
        + "}}\n",
        "manifest 4 MiB+ (100k crons)": "name: big\njobs:\n  j: {target: 'python:m:f'}\ncrons:\n"
        + "".join(f"  c{i}: {{cron: '*/5 * * * *', job: j}}\n" for i in range(120_000)),
    }


def main() -> None:
    """Run every case; print a markdown table."""
    print("| case | seconds | peak MB | outcome |\n|---|---:|---:|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name, text in cases().items():
            path = Path(folder) / "input.yaml"
            path.write_text(text)
            try:
                done = subprocess.run(
                    [sys.executable, "-c", CASE, name, str(path)],
                    capture_output=True,
                    text=True,
                    timeout=300,
                    check=False,
                )
                result = json.loads(done.stdout.strip().splitlines()[-1])
            except (subprocess.TimeoutExpired, IndexError, json.JSONDecodeError):
                result = {"seconds": float("nan"), "peak_mb": float("nan"), "outcome": "failed"}
            print(
                f"| {name} | {result['seconds']:.3f} | {result['peak_mb']:.1f} | "
                f"{result['outcome']} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
