"""`cronplane import crontab`: every kind of line, what installs, and when it fires (cronsim)."""

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
from importer_support import fired, install, instants

from cronplane.clock import FakeClock
from cronplane.errors import UnknownZone
from cronplane.importers.crontab import is_system_crontab, translate
from cronplane.manifest import manifest_from_data
from cronplane.store.database import Database

CRONTAB = r"""# m h dom mon dow command
SHELL=/bin/bash
MAILTO=ops@example.com
PATH=/usr/local/bin:/usr/bin:/bin
*/20 * * * * /usr/local/bin/poll-queue --fast
30 2 * * 1-5 cd /srv/app && ./nightly.sh >> /var/log/nightly.log 2>&1
0 0,12 1-7 * sat	nice -n 5 weekly-report --first-saturday
@hourly  sync-mirror
CRON_TZ=Europe/Berlin
30 2 * * *   berlin-0230
0 9 1,15 * mon  report --when '50\% done'
@daily backup
15 3 * jan-dec sun  /opt/rotate.sh
TZ=Asia/Tokyo
CRON_TZ="Europe/London"
30 1 * * * london-0130
@weekly weekly
@reboot start-things
@every 5m flush
5 4 * * * date +%Y
61 * * * * out-of-range
1 2 3
@monthly
"""

# name -> (expression as cron reads it, zone), per crontab(5): @hourly = `0 * * * *`, …
EXPECTED = {
    "poll-queue": ("*/20 * * * *", "UTC"),
    "nightly.sh": ("30 2 * * 1-5", "UTC"),
    "weekly-report": ("0 0,12 1-7 * sat", "UTC"),
    "sync-mirror": ("0 * * * *", "UTC"),
    "berlin-0230": ("30 2 * * *", "Europe/Berlin"),
    "report": ("0 9 1,15 * mon", "Europe/Berlin"),
    "backup": ("0 0 * * *", "Europe/Berlin"),
    "rotate.sh": ("15 3 * jan-dec sun", "Europe/Berlin"),
    "london-0130": ("30 1 * * *", "Europe/London"),
    "weekly": ("0 0 * * 0", "Europe/London"),
}
SKIPPED = {
    18: "@reboot runs when the cron daemon starts",
    19: "@every 5m is not standard cron: write `every 5 minutes`",
    20: "an unescaped %",
    21: "61 is out of range",
    22: "not a crontab line",
    23: "not a crontab line",
}


def test_every_line_is_translated_or_listed() -> None:
    translation = translate(CRONTAB, stack="box")
    crons, jobs = translation.document["crons"], translation.document["jobs"]
    assert set(crons) == set(EXPECTED)
    assert len(crons) + len(translation.skipped) == 16  # every entry line, none dropped
    skipped = {
        int(item.name.split(":")[0].removeprefix("line ")): item for item in translation.skipped
    }
    assert skipped.keys() == SKIPPED.keys()
    for number, reason in SKIPPED.items():
        assert reason in skipped[number].reason, number
    for name, (_, zone) in EXPECTED.items():
        assert crons[name].get("timezone", "UTC") == zone, name
        assert crons[name]["overlap"] == "allow"  # cron starts a run over a running one
    assert jobs["nightly.sh"]["target"] == (
        "command:cd /srv/app && ./nightly.sh >> /var/log/nightly.log 2>&1"
    )
    assert jobs["report"]["target"] == "command:report --when '50% done'"  # \% is a %
    assert jobs["poll-queue"]["options"] == {
        "max_attempts": 1,
        "shell": "/bin/bash",
        "env": {"PATH": "/usr/local/bin:/usr/bin:/bin"},
    }
    # TZ goes with the commands below it, and is reported; it does not move a time.
    assert jobs["london-0130"]["options"]["env"]["TZ"] == "Asia/Tokyo"
    notes = "\n".join(translation.notes)
    assert "MAILTO=ops@example.com not honoured" in notes
    assert "TZ=Asia/Tokyo is passed to the commands' environment" in notes
    assert "4 line(s) without CRON_TZ are read in UTC" in notes


def test_system_format_reads_the_user_column() -> None:
    text = "# /etc/cron.d/php\n09,39 * * * * root [ -x /usr/lib/php/sessionclean ] && /usr/lib/php/sessionclean\n@daily www-data /srv/purge\n"
    translation = translate(text, stack="php", system=True)
    jobs = translation.document["jobs"]
    assert jobs["sessionclean"]["target"] == (
        "command:[ -x /usr/lib/php/sessionclean ] && /usr/lib/php/sessionclean"
    )
    assert "(as root)" in jobs["sessionclean"]["title"]
    assert "(as www-data)" in jobs["purge"]["title"]
    assert any("root, www-data" in note for note in translation.notes)
    assert is_system_crontab(Path("/etc/cron.d/php")) and is_system_crontab(Path("/etc/crontab"))
    assert not is_system_crontab(Path("/var/spool/cron/crontabs/alice"))


def test_a_bad_daemon_zone_is_refused_and_a_bad_cron_tz_skips_its_lines() -> None:
    with pytest.raises(UnknownZone):
        translate("* * * * * x\n", stack="s", timezone="Mars/Base")
    translation = translate("CRON_TZ=Mars/Base\n* * * * * x\n", stack="s")
    assert translation.skipped[0].reason == "CRON_TZ=Mars/Base is not a known zone"


def test_output_installs_and_fires_when_cron_would(database: Database) -> None:
    """Installed on both databases, the dispatcher's due instants over six days that
    cross the European DST change are the ones cronsim gives for the same lines."""
    translation = translate(CRONTAB, stack="box")
    start = datetime(2026, 3, 27, 0, 0, tzinfo=UTC)
    until = datetime(2026, 4, 2, 0, 0, tzinfo=UTC)
    clock = FakeClock(start)
    _, report = install(database, translation, clock)
    assert report.jobs_registered == tuple(sorted(EXPECTED))
    assert len(report.plan.created) == len(EXPECTED)
    seen = fired(database, clock, until)
    for name, (expression, zone) in EXPECTED.items():
        expected = instants(CronSim(expression, start.astimezone(ZoneInfo(zone))), until)
        assert seen.get(name, []) == [t.astimezone(UTC) for t in expected], name
    assert len(seen["berlin-0230"]) == 6  # 02:30 on the 29th does not exist: 03:00 instead


def test_cli_writes_lists_and_is_strict(tmp_path: Path) -> None:
    source = tmp_path / "crontab"
    source.write_text(CRONTAB)
    output = tmp_path / "app.yaml"
    env: dict[str, str | None] = {}
    done = run_cronplane("import", "crontab", str(source), "-o", str(output), env=env, cwd=tmp_path)
    assert done.code == 0, done.stderr
    assert "not translated: line 18: @reboot start-things: @reboot runs" in done.stderr
    assert "note: line 3: MAILTO=ops@example.com not honoured" in done.stderr
    text = output.read_text()
    assert text.startswith("# Generated by `cronplane import crontab")
    assert "#   - line 19: @every 5m flush: @every 5m is not standard cron" in text
    document = yaml.safe_load(text)
    assert document["name"] == "crontab" and len(document["crons"]) == len(EXPECTED)
    strict = run_cronplane(
        "import", "crontab", str(source), "--strict", "--stack", "box", env=env, cwd=tmp_path
    )
    assert strict.code == 2 and yaml.safe_load(strict.stdout)["name"] == "box"
    as_json = run_cronplane("import", "crontab", str(source), "--json", env=env, cwd=tmp_path)
    report = as_json.json()
    assert isinstance(report, dict) and len(report["skipped"]) == len(SKIPPED)
    missing = run_cronplane("import", "crontab", str(tmp_path / "nope"), env=env, cwd=tmp_path)
    assert missing.code == 2 and "X400007REQINV" in missing.stderr


FIELD = st.sampled_from(["*", "0", "5", "*/15", "1-5", "1,15", "mon-fri", "61", "jan", "L", "x"])
LINE = st.one_of(
    st.builds(
        lambda fields, command: " ".join(fields) + " " + command,
        st.lists(FIELD, min_size=5, max_size=5),
        st.sampled_from(["run.sh", "echo 50\\% done", "date +%Y", "a && b", ""]),
    ),
    st.sampled_from(
        [
            "@daily job",
            "@reboot x",
            "@every 1m x",
            "@yearly",
            "CRON_TZ=Europe/Paris",
            "CRON_TZ=Nowhere/Land",
            "MAILTO=a@b",
            "SHELL=/bin/bash",
            "# comment",
            "",
            "1 2 3",
        ]
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, max_size=12))
def test_every_entry_line_is_a_cron_or_listed_and_the_output_loads(lines: list[str]) -> None:
    """Whatever the file holds: each entry line ends up in exactly one place (a cron or the
    not-translated list), and the manifest is one `app install` accepts."""
    translation = translate("\n".join(lines), stack="box")
    entries = [
        line
        for line in lines
        if line.strip() and not line.startswith("#") and "=" not in line.split(" ")[0]
    ]
    assert len(translation.document["crons"]) + len(translation.skipped) == len(entries)
    manifest_from_data(translation.document)
