"""One table of schedule fields (issue 34): every layer agrees with `core.fields`.

The records and inputs inherit the table's typed `Settings` and a patch takes
its names; the API's models, the CLI's options and the console's form are
built from the rows (the store's columns: tests/store/test_field_columns.py).
These tests hold each to the table, so a row whose attribute or default is
missing fails here by name. The three traps a field with a mutable default
fell into are tested with a planted field (`tags`, a map defaulting to {}):
the manifest's defaults, the `declared` document and the sync plan's
comparison.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import pytest

from cronplane.api import schedule_schemas as schemas
from cronplane.api import sync_schemas
from cronplane.api.schemas import Request, Response
from cronplane.core import fields as table
from cronplane.core.declared import declared_document, declared_value, manifest_defaults
from cronplane.core.fields import BY_NAME, DECLARED_FIELDS, SCHEDULE_FIELDS, Settings
from cronplane.core.inputs import (
    UNSET,
    CronDeclaration,
    Declared,
    SchedulePatch,
    ScheduleSpec,
)
from cronplane.core.model import Schedule
from cronplane.core.schedule_field import ScheduleField
from cronplane.store.tables import schedule_state, schedules
from table_support import bare_schedule

NAMES = [f.name for f in SCHEDULE_FIELDS]
DECLARABLE = [f.name for f in SCHEDULE_FIELDS if f.declarable]


def _default(cls: type, name: str) -> Any:
    found = {f.name: f for f in fields(cls)}[name]
    if found.default_factory is not MISSING:
        return found.default_factory()
    return found.default


def test_every_field_has_one_row_and_a_check() -> None:
    assert len(NAMES) == len(set(NAMES))
    assert list(table.FIELD_CHECKS) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_the_records_and_inputs_carry_every_field(name: str) -> None:
    for cls in (Schedule, ScheduleSpec):
        assert name in {f.name for f in fields(cls)}, (cls.__name__, name)
    assert SchedulePatch(**{name: None}).given() == {name: None}
    if name in DECLARABLE:
        assert name in {f.name for f in fields(Declared)}, name
    if BY_NAME[name].declarable or name == "enabled":
        assert name in {f.name for f in fields(CronDeclaration)}, name


@pytest.mark.parametrize("name", NAMES)
def test_defaults_agree_with_the_table(name: str) -> None:
    want = BY_NAME[name].default_value()
    for cls in (CronDeclaration, ScheduleSpec, Settings):
        if name not in {f.name for f in fields(cls)}:
            continue
        default = _default(cls, name)
        if default is not MISSING:  # a required input (a create's job, every cron) has none
            assert default == want, (cls.__name__, name)


def test_the_shared_settings_are_the_declarable_rows_past_what_runs_when_where() -> None:
    """One typed attribute per row, beside the row: what a new plain field adds."""
    assert {f.name for f in fields(Settings)} == set(DECLARABLE) - {
        "job",
        "cron",
        "timezone",
        "payload",
    }
    for cls in (Schedule, ScheduleSpec, CronDeclaration, Declared):
        assert issubclass(cls, Settings), cls


def test_a_patch_takes_the_table_names_only_and_leaves_unset_ones_out() -> None:
    assert SchedulePatch(overlap="allow", jitter=UNSET, timeout=None).given() == {
        "overlap": "allow",
        "timeout": None,
    }
    with pytest.raises(TypeError, match="no field colour"):
        SchedulePatch(colour="red")
    # None clears these; a map, a list, a choice with a default or what runs never is.
    assert {"misfire_grace", "jitter", "timeout", "start_at", "max_runs", "dst_repeat"} <= (
        table.NULLABLE_FIELDS
    )
    assert not {"job", "cron", "payload", "overlap", "labels", "exclude"} & table.NULLABLE_FIELDS


def test_declared_fields_are_the_declarable_rows() -> None:
    assert tuple(DECLARABLE) == DECLARED_FIELDS
    assert {f.name for f in fields(Declared)} == set(DECLARABLE)


@pytest.mark.parametrize("name", NAMES)
def test_the_store_and_the_api_carry_every_field(name: str) -> None:
    assert name in schedules.c or name in schedule_state.c, name
    assert name in schemas.ScheduleOut.model_fields, name
    if name != "job" or "job" in schemas.SchedulePatchBody.model_fields:
        assert name in schemas.SchedulePatchBody.model_fields, name
    assert name in schemas.ScheduleCreate.model_fields, name
    if name in DECLARABLE:
        assert name in sync_schemas.CronEntry.model_fields, name


def test_operator_field_sets_come_from_the_table() -> None:
    """SPEC §2's operator fields are overridable; what a row runs and its state are not
    (a new row's flag adds it with no edit here)."""
    assert {"cron", "timezone", "payload", "misfire_grace"} <= set(table.OVERRIDABLE_FIELDS)
    assert not {"job", "enabled"} & set(table.OVERRIDABLE_FIELDS)
    assert (*table.OVERRIDABLE_FIELDS, "enabled") == table.OPERATOR_FIELDS


# -- the traps, with a planted field ------------------------------------------------

TAGS = ScheduleField(
    "tags", "Tags", "json", lambda value, seed: dict(value), factory=dict, since=True
)
PLANTED = (*SCHEDULE_FIELDS, TAGS)


def test_a_mutable_default_is_a_manifest_default_and_a_fresh_one_each_time() -> None:
    first, second = manifest_defaults(PLANTED), manifest_defaults(PLANTED)
    assert first["tags"] == {} and second["tags"] == {}
    first["tags"]["team"] = "payments"
    assert second["tags"] == {}
    assert manifest_defaults()["timezone"] == "UTC"


def test_a_field_added_later_is_left_out_of_declared_at_its_default() -> None:
    older = {"job": "j", "cron": "0 * * * *", "timezone": "UTC", "payload": {}}
    assert declared_document({**older, "tags": {}}, PLANTED) == older
    assert declared_document({**older, "tags": {"a": "b"}}, PLANTED) == {
        **older,
        "tags": {"a": "b"},
    }
    # A field that existed from the start stays in, at its default too.
    assert declared_document({**older, "overlap": "skip"}, PLANTED)["overlap"] == "skip"


def test_a_document_without_the_field_reads_as_its_default() -> None:
    planted = {f.name: f for f in PLANTED}
    assert declared_value({"cron": "x"}, "tags", planted) == {}
    assert declared_value({"tags": {"a": "b"}}, "tags", planted) == {"a": "b"}
    assert declared_value({}, "max_runs") is None
    assert declared_value({}, "overlap") == "skip"


def test_declared_to_dict_keeps_older_documents_equal() -> None:
    """What the table's rule does for today's fields: unset later fields stay out."""
    document = Declared(job="j", cron="0 * * * *", timezone="UTC", payload={}).to_dict()
    assert set(document) == {"job", "cron", "timezone", "payload", "misfire_grace", "overlap"}
    with_limit = Declared(
        job="j", cron="0 * * * *", timezone="UTC", payload={}, max_runs=3
    ).to_dict()
    assert with_limit["max_runs"] == 3


def test_schedule_add_offers_every_flagged_field_through_the_installed_command() -> None:
    """The options are the table's: a new row with a flag is an option, with its help."""
    command = shutil.which("cronplane", path=str(Path(sys.executable).parent))
    assert command is not None
    done = subprocess.run(
        [command, "schedule", "add", "--help"], capture_output=True, text=True, check=True
    )
    words = " ".join(done.stdout.split())
    for field in SCHEDULE_FIELDS:
        if field.flag:
            assert field.flag in done.stdout, field.name
            assert " ".join(field.help.split()[:3]) in words, field.name


WHOLE = [f for f in SCHEDULE_FIELDS if f.kind in ("seconds", "count")]


@pytest.mark.parametrize("field", WHOLE, ids=lambda f: f.name)
def test_a_whole_number_row_checks_its_range_and_states_it_to_the_api(field: ScheduleField) -> None:
    assert field.minimum is not None and field.maximum is not None
    assert field.validate(field.maximum, "") == field.maximum
    assert field.validate(None, "") is None
    for bad in (field.minimum - 1, field.maximum + 1, True, 1.5, "5"):
        with pytest.raises(field.error) as refused:
            field.validate(bad, "")
        assert refused.value.detail == {"field": field.name}
    stated = schemas.ScheduleCreate.model_json_schema()["properties"][field.name]["anyOf"][0]
    assert (stated["minimum"], stated["maximum"]) == (field.minimum, field.maximum)


def test_a_new_row_reaches_the_api_models_without_an_edit_there() -> None:
    created = schemas.from_table("Planted", Request, "", schemas.create_field, PLANTED)
    answered = schemas.from_table("PlantedOut", Response, "", schemas.answer_field, PLANTED)
    body = created.model_validate({"job": "j", "cron": "* * * * *"})
    assert body.tags == {} and created.model_fields["tags"].default_factory is dict
    assert answered.model_json_schema()["properties"]["tags"]["type"] == "object"
    assert "tags" in answered.model_json_schema()["required"]


def test_a_schedules_document_is_keyed_as_docs_cli_md_lists_it() -> None:
    """`schedule info --json`'s keys, in order: the row's own, then one per setting."""
    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text().split())
    listed = text.split("an object keyed by the SPEC §2 column", 1)[1].split("then one key")[0]
    own = [name.strip() for name in listed.split("`")[1].split(",")]
    keys = list(bare_schedule().to_dict())
    settings = [f.name for f in fields(Settings)]
    assert keys == [*own, *settings, "state", "runs_left"]
    assert set(settings) <= {f.name for f in SCHEDULE_FIELDS if f.flag}
    assert set(settings) <= set(schemas.ScheduleOut.model_fields)
