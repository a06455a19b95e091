"""Request and response models of manifests and sync (SPEC §5): install, sync, the plan.

The shared bounds and base models are `api.schemas`'; these are apart only to
keep one module per noun.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AliasChoices, Field, StrictBool

from cronplane.api.schedule_schemas import answer_field, from_table, optional_field, request_type
from cronplane.api.schemas import (
    MAX_CRONS,
    MAX_NAME,
    NAME_SCHEMA,
    CronText,
    JSONObject,
    NameText,
    Request,
    Response,
    described,
)
from cronplane.core.fields import SCHEDULE_FIELDS

if TYPE_CHECKING:
    CronEntry = Request
    Declaration = Response
else:
    CronEntry = from_table(
        "CronEntry",
        Request,
        "The long form of a declared cron (the short form is just the expression); "
        "`enabled` is the state a new row is created in: sync never changes it.",
        # Only the expression is required: `job` defaults to the cron's name.
        lambda field: (
            (request_type(field), Field()) if field.kind == "cron" else optional_field(field)
        ),
    )
    Declaration = from_table(
        "Declaration",
        Response,
        "A cron as the app declares it, resolved (normalized cron, concrete payload).",
        lambda field: answer_field(field, since_default=True),
        tuple(field for field in SCHEDULE_FIELDS if field.declarable),
    )


CronsMap = Annotated[
    dict[
        Annotated[str, Field(max_length=MAX_NAME), described(**NAME_SCHEMA)], CronText | CronEntry
    ],
    Field(max_length=MAX_CRONS),
    # Keys are cron names: the pattern above, and nothing else.
    described(additionalProperties=False),
]


class SyncBody(Request):
    """Reconcile the app rows of (stack, environment) with the declared crons (SPEC §5)."""

    stack: NameText
    environment: NameText = "default"
    crons: CronsMap = Field(default_factory=dict)
    dry_run: StrictBool = False


class SeedSyncBody(Request):
    """The seed's `shc.schedule.sync` call; the tenant is the token's unless a platform token names one."""

    stack: NameText = Field(validation_alias=AliasChoices("stack", "stackName", "stack_name"))
    environment: NameText = "default"
    crons: CronsMap = Field(default_factory=dict)
    tenant: NameText | None = None
    dry_run: StrictBool = False


class PlannedChange(Response):
    """An updated row and the fields the sync changed."""

    name: str
    fields: list[str]


class PlanConflict(Response):
    """A declared name taken by a row the app does not own."""

    name: str
    source: str


class PlanDrift(Response):
    """A field an operator overrode: the row keeps it, the manifest says otherwise."""

    name: str
    field: str
    current: Any
    declared: Any


class Plan(Response):
    """What a sync did (or, on a dry run, would do); `declared` holds what was created or updated."""

    created: list[str]
    updated: list[PlannedChange]
    removed: list[str]
    unchanged: list[str]
    conflicts: list[PlanConflict]
    drift: list[PlanDrift]
    declared: dict[str, Declaration] = Field(default_factory=dict)


class SyncOut(Response):
    """The plan applied, with counts."""

    dry_run: bool
    plan: Plan
    summary: dict[str, int]


class SeedSyncOut(Response):
    """The seed's envelope: the answer under `message`."""

    message: SyncOut


class AppInstall(Request):
    """Install or upgrade an app from its manifest document (app.yaml as JSON)."""

    manifest: JSONObject
    environment: NameText = "default"
    dry_run: StrictBool = False


class AppReportOut(Response):
    """What installing or uninstalling an app did: its jobs, and the sync plan."""

    stack: str
    dry_run: bool
    jobs_registered: list[str]
    jobs_updated: list[str]
    jobs_deactivated: list[str]
    plan: Plan
    summary: dict[str, int]
