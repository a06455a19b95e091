"""`python:` jobs outside CRONPLANE_PYTHON_TARGETS through the installed `cronplane` (issue 33).

`job add` and `app install` of a module the installation does not allow exit 6 with
X403252PYDENY and write nothing; the variable set to nothing allows no module at all.
"""

from __future__ import annotations

from pathlib import Path

from cli_process import Cronplane

MANIFEST = """\
name: shop
jobs:
  pack: {target: 'python:shop.jobs:pack'}
  shell: {target: 'python:pty:spawn', payload: {argv: [sh]}}
crons:
  pack: '@daily'
  shell: '@hourly'
"""


def _nothing_written(cronplane: Cronplane) -> None:
    assert cronplane("job", "ls", "--all", "--json").json() == []
    assert cronplane("schedule", "ls", "--all", "--json").json() == []


def test_job_add_of_a_module_outside_exits_6_and_writes_nothing(cronplane: Cronplane) -> None:
    done = cronplane("job", "add", "shell", "--target", "python:pty:spawn")
    assert done.code == 6, (done.code, done.stderr)
    assert "X403252PYDENY" in done.stderr and "'pty'" in done.stderr
    assert "CRONPLANE_PYTHON_TARGETS" in done.stderr and "Traceback" not in done.stderr
    _nothing_written(cronplane)


def test_app_install_naming_a_module_outside_exits_6_and_writes_nothing(
    cronplane: Cronplane, tmp_path: Path
) -> None:
    (tmp_path / "app.yaml").write_text(MANIFEST)
    assert cronplane("db", "upgrade").code == 0
    for extra in (("--dry-run",), ()):
        done = cronplane("app", "install", "app.yaml", *extra)
        assert done.code == 6, (extra, done.code, done.stderr)
        assert "X403252PYDENY" in done.stderr, done.stderr
    _nothing_written(cronplane)


def test_an_empty_setting_allows_no_module(cronplane: Cronplane) -> None:
    done = cronplane("job", "add", "ok", "--target", "python:shop.jobs:pack")
    assert done.code == 0, done.stderr
    refused = cronplane(
        "job", "add", "again", "--target", "python:shop.jobs:pack", CRONPLANE_PYTHON_TARGETS=""
    )
    assert refused.code == 6 and "X403252PYDENY" in refused.stderr, refused.stderr
