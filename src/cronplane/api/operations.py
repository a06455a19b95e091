"""The OpenAPI operation id of every route: `<resource>_<verb>`, named here once.

FastAPI's default (`create_schedule_api_v1_tenants__tenant__schedules_post`)
becomes each generated client's method name; these are what a user of such a
client reads instead (`schedules_create`, `jobs_get`). `operation_id` is the
app's `generate_unique_id_function`: a route missing from OPERATIONS stops the
app from being built, naming the route, so a new route cannot ship with an
unreadable id. tests/api/test_operation_ids.py checks that every id in
`/api/v1/openapi.json` is readable and unique.
"""

from __future__ import annotations

from typing import Any, Final

# Keyed by the route function's name (each is unique among the routes).
OPERATIONS: Final[dict[str, str]] = {
    # schedules (api/schedules.py, api/controls.py, run now in api/queue.py)
    "list_schedules": "schedules_list",
    "create_schedule": "schedules_create",
    "get_schedule": "schedules_get",
    "update_schedule": "schedules_update",
    "remove_schedule": "schedules_remove",
    "enable_schedule": "schedules_enable",
    "disable_schedule": "schedules_disable",
    "reset_schedule": "schedules_reset",
    "schedule_history": "schedules_history",
    "preview_schedule": "schedules_preview",
    "pause_schedule": "schedules_pause",
    "resume_schedule": "schedules_resume",
    "backfill_schedule": "schedules_backfill",
    "run_now": "schedules_run",
    # versions (api/versions.py)
    "list_versions": "schedules_versions",
    "get_version": "schedules_version",
    "diff_versions": "schedules_diff",
    "rollback_schedule": "schedules_rollback",
    "restore_schedule": "schedules_restore",
    # business calendars (api/calendars.py)
    "list_calendars": "calendars_list",
    "get_calendar": "calendars_get",
    "save_calendar": "calendars_save",
    "remove_calendar": "calendars_remove",
    # actions by selector (api/selections.py)
    "pause_selection": "selection_pause",
    "resume_selection": "selection_resume",
    "enable_selection": "selection_enable",
    "disable_selection": "selection_disable",
    "run_selection": "selection_run",
    # queue items (api/queue.py)
    "list_items": "items_list",
    "get_item": "items_get",
    "item_logs": "items_logs",
    "cancel_item": "items_cancel",
    # jobs (api/jobs.py)
    "list_jobs": "jobs_list",
    "register_job": "jobs_register",
    "get_job": "jobs_get",
    "update_job": "jobs_update",
    "deactivate_job": "jobs_deactivate",
    # job versions (api/job_versions.py)
    "list_job_versions": "jobs_versions",
    "get_job_version": "jobs_version",
    "diff_job_versions": "jobs_diff",
    "rollback_job": "jobs_rollback",
    # apps (api/sync.py)
    "sync": "apps_sync",
    "install_app": "apps_install",
    "uninstall_app": "apps_uninstall",
    "seed_sync": "apps_seed_sync",
    # environments (api/environments.py)
    "diff_environments": "environments_diff",
    "promote_environment": "environments_promote",
    # events, cron, identity
    "list_events": "events_list",
    "export_audit": "audit_export",
    "explain_post": "cron_explain",
    "explain_get": "cron_explain_query",
    "whoami": "identity_whoami",
    # alerts (api/alerts.py)
    "list_channels": "alert_channels_list",
    "add_channel": "alert_channels_add",
    "remove_channel": "alert_channels_remove",
    "list_rules": "alert_rules_list",
    "add_rule": "alert_rules_add",
    "remove_rule": "alert_rules_remove",
    "list_alerts": "alerts_list",
    "ack_alert": "alerts_ack",
    # tenants (api/tenants.py, platform tokens)
    "list_tenants": "tenants_list",
    "show_tenant": "tenants_get",
    "put_quota": "tenants_quota_replace",
    "patch_quota": "tenants_quota_update",
    # health (api/health.py)
    "healthz": "health_live",
    "readyz": "health_ready",
    "prometheus": "health_metrics",
}


def operation_id(route: Any) -> str:
    """The operation id of `route` (an APIRoute); a route not in OPERATIONS is a bug."""
    try:
        return OPERATIONS[route.name]
    except KeyError:
        raise LookupError(
            f"route {route.name!r} ({sorted(route.methods)} {route.path_format}) has no "
            "operation id: name it in cronplane.api.operations.OPERATIONS"
        ) from None
