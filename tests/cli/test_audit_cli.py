"""`cronplane audit export` (issue 38; docs/cli.md, Audit export) through the installed
command: JSON Lines and CSV parsed back, every page streamed, a resumed export giving
exactly the rest, and bad input refused with X400382AUDINV, exit 2, nothing written."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_process import Cronplane

from cronplane.codes import REGISTRY
from cronplane.core.audit import CSV_FIELDS
from cronplane.events import AUDIT_KINDS
from cronplane.store.database import Database
from cronplane.store.events import append_events, event_values

AT = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
# A run's story and a change, over and over: what a tenant's events look like.
CYCLE = ("V201001SCHCRT", "V200610SCHTRG", "V200030ITMSUC", "X200031ITMFAI", "V200101SCHPAU")


def _seed(tmp_path: Path, count: int) -> None:
    """`count` events of acme a minute apart from AT (and a few of globex) in the CLI's
    database, recorded long ago: none is too young to export."""
    database = Database(f"sqlite:///{tmp_path / 'cli.db'}")
    database.upgrade()
    rows = [
        event_values(
            REGISTRY[CYCLE[n % len(CYCLE)]],
            tenant="globex" if n % 97 == 5 else "acme",
            actor=f"user{n % 3}",
            message=f'event {n}, with a comma and a "quote"',
            now=AT + timedelta(minutes=n),
            schedule_name="nightly",
            detail={"n": n, "note": 'ünïcode, "quoted"\nand a new line'},
        )
        for n in range(count)
    ]
    with database.begin() as conn:
        append_events(conn, rows)
    database.dispose()


def _lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


def test_jsonl_streams_every_page_oldest_first(cronplane: Cronplane, tmp_path: Path) -> None:
    _seed(tmp_path, 2500)  # three pages of 1000
    done = cronplane("audit", "export", "--since", "2026-01-05")
    assert done.code == 0, done.stderr
    records = _lines(done.stdout)
    ids = [r["id"] for r in records]
    assert ids == sorted(set(ids))
    assert len(records) == 2500 - len([n for n in range(2500) if n % 97 == 5])
    assert {r["tenant"] for r in records} == {"acme"}
    assert list(records[0]) == list(CSV_FIELDS)
    assert records[0]["kind"] == AUDIT_KINDS[records[0]["code"]]
    assert f"resume with --after {ids[-1]}" in done.stderr


def test_a_resumed_export_gives_exactly_the_rest(cronplane: Cronplane, tmp_path: Path) -> None:
    _seed(tmp_path, 60)
    whole = _lines(cronplane("audit", "export", "--since", "2026-01-05").stdout)
    cursor = whole[20]["id"]
    done = cronplane("audit", "export", "--since", "2026-01-05", "--after", str(cursor), "--json")
    assert done.code == 0, done.stderr
    assert _lines(done.stdout) == whole[21:]
    assert json.loads(done.stderr) == {"records": len(whole) - 21, "last": whole[-1]["id"]}
    # Resuming needs no --since.
    assert _lines(cronplane("audit", "export", "--after", str(cursor)).stdout) == whole[21:]


def test_kind_and_window(cronplane: Cronplane, tmp_path: Path) -> None:
    _seed(tmp_path, 60)
    done = cronplane(
        "audit",
        "export",
        "--since",
        "2026-01-05T12:10:00",  # naive: UTC
        "--until",
        "2026-01-05T12:30:00Z",
        "--kind",
        "runs",
    )
    assert done.code == 0, done.stderr
    records = _lines(done.stdout)
    assert {r["kind"] for r in records} == {"runs"}
    assert [r["detail"]["n"] for r in records] == [
        n for n in range(10, 30) if CYCLE[n % len(CYCLE)] in {CYCLE[1], CYCLE[2], CYCLE[3]}
    ]


def test_csv_has_a_fixed_header_and_parses_back(cronplane: Cronplane, tmp_path: Path) -> None:
    _seed(tmp_path, 40)
    as_jsonl = _lines(cronplane("audit", "export", "--since", "2026-01-05").stdout)
    out = tmp_path / "audit.csv"
    done = cronplane(
        "audit", "export", "--since", "2026-01-05", "--format", "csv", "--output", str(out)
    )
    assert done.code == 0, done.stderr
    assert done.stdout == ""
    with out.open(newline="", encoding="utf-8") as stream:
        reader = csv.DictReader(stream)
        assert tuple(reader.fieldnames or ()) == CSV_FIELDS
        rows = list(reader)
    assert len(rows) == len(as_jsonl)
    for row, record in zip(rows, as_jsonl, strict=True):
        assert json.loads(row["detail"]) == record["detail"]
        assert row["message"] == record["message"]
        assert int(row["id"]) == record["id"]
        for name in CSV_FIELDS:
            if name != "detail":
                assert row[name] == ("" if record[name] is None else str(record[name])), name


@pytest.mark.parametrize(
    "args",
    [
        ("--since", "last tuesday"),
        ("--since", "2026-01-05", "--until", "2026-01-01"),
        ("--since", "2026-01-05", "--kind", "everything"),
        ("--since", "2026-01-05", "--format", "xml"),
        ("--since", "2026-01-05", "--after", "x7"),
        ("--kind", "runs"),  # neither --since nor --after
    ],
)
def test_bad_input_exits_2_coded_and_writes_nothing(
    cronplane: Cronplane, tmp_path: Path, args: tuple[str, ...]
) -> None:
    _seed(tmp_path, 5)
    out = tmp_path / "never.jsonl"
    done = cronplane("audit", "export", *args, "--output", str(out))
    assert done.code == 2, done.stderr
    assert done.stderr.startswith("X400382AUDINV"), done.stderr
    assert not out.exists() and done.stdout == ""
    coded = cronplane("audit", "export", *args, "--json")
    assert coded.code == 2 and coded.stdout == ""
    assert json.loads(coded.stderr)["code"] == "X400382AUDINV"
