"""Hostile files through the installed command (issue 33, items 4 and 5): coded, exit 2.

Each was a traceback, a silent drop or seconds of work before: 5,000-deep
nesting (RecursionError, exit 1), a 7-level alias bomb (12.6 s, 726 MB), a
5,000-digit integer (ValueError), two `crons:` maps (the first dropped), a
manifest of any size.
"""

from __future__ import annotations

import time
from pathlib import Path

from cli_process import Cronplane

from hostile_support import billion_laughs

MANIFEST = """name: shop
jobs:
  report: {target: "python:shop.jobs:report"}
crons:
  nightly: {cron: "0 2 * * *", job: report}
"""


def refused(done: object, code: str) -> None:
    """Exit 2, the code first on standard error, and no traceback."""
    assert done.code == 2, (done.code, done.stderr)  # type: ignore[attr-defined]
    assert done.stderr.startswith(code), done.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in done.stderr  # type: ignore[attr-defined]


def test_import_kubernetes_of_5000_deep_nesting_is_coded(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    for name, text in {"flow.yaml": "[" * 5000, "block.yaml": "- " * 5000 + "x\n"}.items():
        (tmp_path / name).write_text(text)
        done = cronplane("import", "kubernetes", name)
        refused(done, "X400340YAMLIM")
        assert "nested deeper than 64" in done.stderr and "line 1" in done.stderr


def test_import_kubernetes_refuses_an_alias_bomb_fast(cronplane: Cronplane, tmp_path: Path) -> None:
    (tmp_path / "bomb.yaml").write_text(billion_laughs())
    started = time.perf_counter()
    done = cronplane("import", "kubernetes", "bomb.yaml")
    elapsed = time.perf_counter() - started
    refused(done, "X400340YAMLIM")
    assert "nodes" in done.stderr and "line 7" in done.stderr
    assert elapsed < 5, elapsed  # the process's start included; the refusal itself: ms


def test_a_5000_digit_integer_in_app_install_is_coded(cronplane: Cronplane, tmp_path: Path) -> None:
    big = MANIFEST.replace("job: report}", "job: report, payload: {n: " + "7" * 5000 + "}}")
    (tmp_path / "app.yaml").write_text(big)
    done = cronplane("app", "install", "app.yaml", "--dry-run")
    refused(done, "X400340YAMLIM")
    assert "5000 digits" in done.stderr and "line 5" in done.stderr
    assert not (tmp_path / "cli.db").exists()


def test_two_crons_maps_are_refused_not_merged(cronplane: Cronplane, tmp_path: Path) -> None:
    (tmp_path / "app.yaml").write_text(MANIFEST + "crons:\n  hourly: '@hourly'\n")
    done = cronplane("app", "install", "app.yaml")
    refused(done, "X400341YAMDUP")
    assert "'crons'" in done.stderr and "line 6" in done.stderr
    assert not (tmp_path / "cli.db").exists()


def test_duplicate_keys_in_a_cronjob_are_refused(cronplane: Cronplane, tmp_path: Path) -> None:
    (tmp_path / "cj.yaml").write_text("kind: CronJob\nspec: {}\nkind: List\n")
    refused(cronplane("import", "kubernetes", "cj.yaml"), "X400341YAMDUP")


def test_a_manifest_over_4_mib_is_refused_and_nothing_written(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    padding = "# " + "x" * 100 + "\n"
    (tmp_path / "app.yaml").write_text(MANIFEST + padding * (4 * 1024 * 1024 // len(padding)))
    done = cronplane("app", "install", "app.yaml")
    refused(done, "X413340INPBIG")
    assert not (tmp_path / "cli.db").exists()
    (tmp_path / "crontab").write_text("* * * * * true\n" + padding * 42_000)
    refused(cronplane("import", "crontab", "crontab"), "X413340INPBIG")


def test_a_kubernetes_directory_shares_the_cap(cronplane: Cronplane, tmp_path: Path) -> None:
    folder = tmp_path / "k8s"
    folder.mkdir()
    for index in range(3):  # 1.5 MiB each: each under the cap, not together
        (folder / f"{index}.yaml").write_text("# " + "x" * (3 * 512 * 1024) + "\n")
    done = cronplane("import", "kubernetes", "k8s")
    refused(done, "X413340INPBIG")
    assert "files under" in done.stderr


def test_import_crontab_of_10k_lines_named_alike(cronplane: Cronplane, tmp_path: Path) -> None:
    (tmp_path / "crontab").write_text("*/5 * * * * /usr/local/bin/job.sh --run\n" * 10_000)
    done = cronplane("import", "crontab", "crontab", "-o", "app.yaml", "--json", timeout=60)
    assert done.code == 0, done.stderr
    crons = done.json()["manifest"]["crons"]  # type: ignore[index]
    assert len(crons) == 10_000
    assert {"job.sh", "job.sh-2", "job.sh-10000"} <= set(crons)
