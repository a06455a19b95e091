"""Files other people wrote (tests/importers/real/SOURCES.md), through the installed
`cronplane import` in a subprocess: every entry translated or listed, exit 0, and what
is written passes `cronplane app install --dry-run`; each translated cron fires, by
cronplane's engine, where cronsim (Debian cron's rules) says, over a DST change."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from cli_process import run_cronplane
from cronsim import CronSim

from cronplane.core.occurrences import next_run

REAL = Path(__file__).with_name("real")
CRONTABS = sorted((REAL / "crontab").iterdir())
# The files whose sixth field is a user: found by content, not by path.
SYSTEM = {
    "EFForg-action-center-platform.docker-crontab": "root",
    "Blair2004-NexoPOS.docker-crontab": "root",
    "Infinidat-infinimetrics-container.docker-crontab": "root",
    "Debian-debsources.etc-crontab": "debian-mirror",
    "SpiderOak-netkes.etc-crontab": "root",
    "debian-php-common.cron.d-php": "root",
}
COMMANDS = {"CRONPLANE_ALLOW_COMMAND_TARGETS": "1"}
# Europe/London's spring change (30 March 2025) and autumn one (26 October 2025).
WINDOWS = (
    datetime(2025, 3, 29, 0, 0, tzinfo=UTC),
    datetime(2025, 10, 25, 0, 0, tzinfo=UTC),
)


def entry_lines(path: Path) -> int:
    """Lines cron would read as entries (not blank, comments or variable settings)."""
    count = 0
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        head = line.split(None, 1)[0]
        count += not ("=" in head and not head.startswith(("@", "*")) and head[0].isalpha())
    return count


def installs(tmp_path: Path, manifest: str) -> None:
    """`cronplane app install MANIFEST --dry-run` on a fresh SQLite file exits 0."""
    env = {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cp.db'}", **COMMANDS}
    if not (tmp_path / "cp.db").exists():
        assert run_cronplane("db", "upgrade", env=env, cwd=tmp_path).code == 0
    dry = run_cronplane("app", "install", manifest, "--dry-run", env=env, cwd=tmp_path)
    assert dry.code == 0, dry.stderr


def fires_like_cron(crons: dict[str, Any], zone: str) -> int:
    """Compare each cron's next 60 fires after each window's start with cronsim's."""
    checked = 0
    tz = ZoneInfo(zone)
    for name, cron in crons.items():
        if cron["cron"].startswith("@"):
            continue
        for start in WINDOWS:
            ours, after = [], start
            oracle = CronSim(cron["cron"], start.astimezone(tz))
            theirs = [next(oracle).astimezone(UTC) for _ in range(60)]
            for _ in range(60):
                found = next_run(cron["cron"], cron.get("timezone", "UTC"), after)
                assert found is not None
                ours.append(found)
                after = found
            assert ours == theirs, name
            checked += 60
    return checked


@pytest.mark.parametrize("path", CRONTABS, ids=[p.name for p in CRONTABS])
def test_each_real_crontab(path: Path, tmp_path: Path) -> None:
    shutil.copy(path, tmp_path / path.name)
    done = run_cronplane(
        "import", "crontab", path.name, "--timezone", "Europe/London", "-o", "app.yaml",
        "--json", env={}, cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    assert "Traceback" not in done.stderr
    document: Any = done.json()
    crons, skipped = document["manifest"]["crons"], document["skipped"]
    assert len(crons) + len(skipped) == entry_lines(path)
    user = SYSTEM.get(path.name)
    titles = [job["title"] for job in document["manifest"]["jobs"].values()]
    if user is not None:
        assert any("read as a user column" in note for note in document["notes"])
        assert all(f"(as {user})" in title for title in titles)
        assert not any(
            job["target"].startswith(f"command:{user} ")
            for job in document["manifest"]["jobs"].values()
        )
    else:
        assert not any("user column" in note for note in document["notes"])
    installs(tmp_path, "app.yaml")
    assert fires_like_cron(crons, "Europe/London") == 120 * len(
        [c for c in crons.values() if not c["cron"].startswith("@")]
    )


def test_the_debian_php_line_is_named_after_sessionclean(tmp_path: Path) -> None:
    shutil.copy(REAL / "crontab" / "debian-php-common.cron.d-php", tmp_path / "php")
    document: Any = run_cronplane("import", "crontab", "php", "--json", env={}, cwd=tmp_path).json()
    assert list(document["manifest"]["crons"]) == ["sessionclean"]
    job = document["manifest"]["jobs"]["sessionclean"]
    assert job["target"].startswith("command:[ -x /usr/lib/php/sessionclean ] && if")


def test_a_real_file_read_as_the_user_says(tmp_path: Path) -> None:
    """--user overrides the guess: the sixth field is then the command's first word."""
    shutil.copy(REAL / "crontab" / "Blair2004-NexoPOS.docker-crontab", tmp_path / "crontab")
    document: Any = run_cronplane(
        "import", "crontab", "crontab", "--user", "--json", env={}, cwd=tmp_path
    ).json()
    (job,) = document["manifest"]["jobs"].values()
    assert job["target"].startswith("command:root php ")
    assert not any("user column" in note for note in document["notes"])


def test_the_real_kubernetes_directory(tmp_path: Path) -> None:
    folder = tmp_path / "k8s"
    shutil.copytree(REAL / "kubernetes", folder)
    (folder / "zz-broken.yaml").write_text("apiVersion: batch/v1\nkind: [CronJob\n")
    done = run_cronplane(
        "import", "kubernetes", "k8s", "--timezone", "Europe/London", "-o", "app.yaml",
        "--json", env={}, cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    document: Any = done.json()
    crons, jobs = document["manifest"]["crons"], document["manifest"]["jobs"]
    # Each keeps its image (the default): the entrypoint-only backup translates too.
    assert set(crons) == {"routeros-version-checker", "pulse", "pulse-daily", "mysql-backup"}
    reasons = {item["name"].split(" (")[0]: item["reason"] for item in document["skipped"]}
    assert "is not valid" in reasons["${K8S_NAMESPACE}/aargaugpt-retentionguard-${ENVIRONMENT}"]
    assert "is not YAML" in reasons[str(Path("k8s") / "zz-broken.yaml")]
    assert len(reasons) == 2
    assert jobs["mysql-backup"]["target"] == "container:192.168.4.30:5000/mysql-dumper:latest"
    assert jobs["pulse"]["target"] == "container:ghcr.io/harery/pulse:latest"
    assert jobs["pulse"]["options"]["command"] == ["pulse"]
    assert jobs["pulse"]["options"]["args"] == ["--auto", "--quiet"]
    assert jobs["pulse"]["options"]["pull"] == "missing"  # imagePullPolicy: IfNotPresent
    # The block scalar of `sh -c` stays the container's command, word for word.
    shell, flag, script = jobs["routeros-version-checker"]["options"]["command"]
    assert (shell, flag) == ("/bin/sh", "-c")
    assert script.splitlines()[1] == "pip install --no-cache-dir -r /app/requirements.txt"
    assert document["manifest"]["name"] == "k8s"
    assert fires_like_cron(crons, "Europe/London") == 120 * 4  # both DST changes
    installs(tmp_path, "app.yaml")

    # `--as command`: host commands, the image recorded.
    done = run_cronplane(
        "import", "kubernetes", "k8s", "--timezone", "Europe/London", "--as", "command",
        "-o", "hosted.yaml", "--json", env={}, cwd=tmp_path,
    )  # fmt: skip
    assert done.code == 0, done.stderr
    document = done.json()
    crons, jobs = document["manifest"]["crons"], document["manifest"]["jobs"]
    assert set(crons) == {"routeros-version-checker", "pulse", "pulse-daily"}
    reasons = {item["name"].split(" (")[0]: item["reason"] for item in document["skipped"]}
    assert "neither command nor args" in reasons["myapps/mysql-backup"]
    # The block scalar of `sh -c` is the command: a script, line for line.
    script = jobs["routeros-version-checker"]["target"].removeprefix("command:")
    assert script.splitlines()[1] == "pip install --no-cache-dir -r /app/requirements.txt"
    assert script.splitlines()[-1] == "python /app/check_routeros_version.py"
    assert jobs["pulse"]["target"] == "command:pulse --auto --quiet"
    assert fires_like_cron(crons, "Europe/London") == 120 * 3  # both DST changes
    installs(tmp_path, "hosted.yaml")
    strict = run_cronplane("import", "kubernetes", "k8s", "--strict", env={}, cwd=tmp_path)
    assert strict.code == 2


def test_single_kubernetes_files_are_named_after_them(tmp_path: Path) -> None:
    for name in ("CalebSargeant-mikrotik-chr.cronjob.yaml", "Harery-SYSMAINT.cronjob.yaml"):
        shutil.copy(REAL / "kubernetes" / name, tmp_path / name)
    one: Any = run_cronplane(
        "import", "kubernetes", "CalebSargeant-mikrotik-chr.cronjob.yaml", "--json",
        env={}, cwd=tmp_path,
    ).json()  # fmt: skip
    assert one["manifest"]["name"] == "routeros-version-checker"  # its one CronJob
    two: Any = run_cronplane(
        "import", "kubernetes", "Harery-SYSMAINT.cronjob.yaml", "--json", env={}, cwd=tmp_path
    ).json()
    assert two["manifest"]["name"] == "Harery-SYSMAINT.cronjob"  # the file's
    named: Any = run_cronplane(
        "import", "kubernetes", "Harery-SYSMAINT.cronjob.yaml", "--stack", "pulse", "--json",
        env={}, cwd=tmp_path,
    ).json()  # fmt: skip
    assert named["manifest"]["name"] == "pulse"
    # `app install --stack` cannot rename a manifest's stack: it says so instead of silence.
    run_cronplane(
        "import",
        "kubernetes",
        "Harery-SYSMAINT.cronjob.yaml",
        "-o",
        "app.yaml",
        env={},
        cwd=tmp_path,
    )
    env = {"CRONPLANE_DATABASE_URL": f"sqlite:///{tmp_path / 'cp.db'}", **COMMANDS}
    assert run_cronplane("db", "upgrade", env=env, cwd=tmp_path).code == 0
    dry = run_cronplane(
        "--stack", "other", "app", "install", "app.yaml", "--dry-run", env=env, cwd=tmp_path
    )
    assert dry.code == 0, dry.stderr
    assert "--stack other is not used" in dry.stderr
