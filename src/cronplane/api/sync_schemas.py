"""Request and response models of manifests and sync (SPEC §5): install, sync, the plan.

The shared bounds and base models are `api.schemas`'; these are apart only to
keep one module per noun.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import AliasChoices, Field, StrictBool

from cronplane.api.schemas import (
    MAX_CRONS,
    MAX_NAME,
    NAME_SCHEMA,
    CronText,
    Grace,
    InstantText,
    Jitter,
    JSONObject,
    MaxRuns,
    NameText,
    Request,
    Response,
    TimeoutSeconds,
    ZoneText,
    described,
)
from cronplane.core.choices import Overlap


class CronEntry(Request):
    """The long form of a declared cron (the short form is just the expression)."""

    cron: CronText
    job: NameText | None = None
    timezone: ZoneText | None = None
    payload: JSONObject | None = None
    misfire_grace: Grace | None = None
    overlap: Overlap | None = None
    timeout: TimeoutSeconds | None = None
    enabled: StrictBool | None = Field(
        default=None, description="The state a new row is created in; sync never changes it."
    )
    jitter: Jitter | None = None
    start_at: InstantText | None = None
    end_at: InstantText | None = None
    max_runs: MaxRuns | None = None


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


class Declaration(Response):
    """A cron as the app declares it, resolved (normalized cron, concrete payload)."""

    job: str
    cron: str
    timezone: str
    payload: dict[str, Any]
    misfire_grace: int | None
    overlap: Overlap
    jitter: int | None = None
    timeout: int | None = None
    start_at: datetime | None = None
    end_at: datetime | None = None
    max_runs: int | None = None


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
