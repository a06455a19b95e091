"""Input refused before anything is written (400, CLI exit 2)."""

from __future__ import annotations

from cronplane.errors.base import InvalidInput, error_code


class ScheduleSyntax(InvalidInput, ValueError):
    """The cron parser's rejection; the message quotes the input and names the field."""

    code = error_code("X400003INVSCH", "schedule expression rejected by the parser")


class CronRejected(InvalidInput):
    """A cron expression refused by the service (wraps ScheduleSyntax)."""

    code = error_code("X400001CRNINV", "cron rejected; the message includes the offending string")


class InvalidPayload(InvalidInput):
    """Payload not a JSON object, too large or deep, or invalid against the job's schema."""

    code = error_code(
        "X400002PAYINV", "payload invalid: not an object, over limits, or against the job schema"
    )


class UnknownZone(InvalidInput):
    """Time zone not a known IANA zone."""

    code = error_code("X400004ZONINV", "time zone unknown (not an IANA zone)")


class UnknownHolidays(InvalidInput):
    """A holidays region the `holidays` package does not know (core.calendars)."""

    code = error_code("X400364HOLINV", "public holidays unknown: no such country or subdivision")


class InvalidName(InvalidInput):
    """A name outside 1-64 characters of letters, digits, `.`, `_`, `-`."""

    code = error_code("X400005NAMINV", "name invalid: 1-64 of letters, digits, '.', '_', '-'")


class InvalidManifest(InvalidInput):
    """An app manifest with one or more invalid entries; detail lists each by path."""

    code = error_code(
        "X400006MANINV", "app manifest invalid; detail lists every problem with its path"
    )


class YamlOverLimit(InvalidInput):
    """YAML over one of the loader's limits (core.yaml_bounds); detail names it and the line."""

    code = error_code(
        "X400340YAMLIM",
        "YAML over a limit (depth, aliases, nodes, documents, integer digits); names it and the line",
    )


class YamlDuplicateKey(InvalidInput):
    """A YAML mapping that names one key twice (the first would be dropped silently)."""

    code = error_code(
        "X400341YAMDUP", "YAML mapping names a key twice; detail names the key and line"
    )


class InvalidRequest(InvalidInput):
    """A request that is malformed or carries unknown or out-of-range fields."""

    code = error_code("X400007REQINV", "request invalid: malformed, unknown field, or out of range")


class InvalidTarget(InvalidInput):
    """A job target that is not `python:`, `webhook:` or `celery:` well formed."""

    code = error_code("X400008TGTINV", "job target invalid")


class UnsupportedDatabase(InvalidInput):
    """A database URL naming a database or driver cronplane does not run on (refused at start)."""

    code = error_code("X400009DBUNSP", "database unsupported: use sqlite or postgresql (psycopg)")


class IntervalTooShort(InvalidInput):
    """A schedule that fires more often than the installation's minimum interval."""

    code = error_code(
        "X400010INTMIN", "schedule fires more often than the minimum interval; the message names it"
    )


class InvalidJitter(InvalidInput):
    """A jitter that is not whole seconds >= 0."""

    code = error_code("X400100JITINV", "jitter invalid: whole seconds >= 0, or null")


class JitterTooLong(InvalidInput):
    """A jitter not shorter than the schedule's shortest interval (fires could reorder)."""

    code = error_code("X400101JITLNG", "jitter not shorter than the schedule's shortest interval")


class InvalidUntil(InvalidInput):
    """A pause's `until` unparsable, not in the future, or absent while `missed` is given."""

    code = error_code(
        "X400102UNTINV", "pause until invalid: unparsable, past, or missing for missed"
    )


class InvalidBackfill(InvalidInput):
    """A backfill range that is unparsable, empty or reversed (to <= from)."""

    code = error_code("X400103BKFRNG", "backfill range invalid: unparsable, or to <= from")


class BackfillTooLarge(InvalidInput):
    """A backfill range holding more occurrences than one request may enqueue."""

    code = error_code("X400104BKFCAP", "backfill range holds more occurrences than the cap")


class InvalidWindow(InvalidInput):
    """An active window refused: a bound that is not an ISO 8601 instant, or end before start."""

    code = error_code(
        "X400150WININV",
        "active window invalid: start_at/end_at not an instant, or end before start",
    )


class InvalidMaxRuns(InvalidInput):
    """A run limit refused: max_runs must be a whole number >= 1 (or null: no limit)."""

    code = error_code(
        "X400151RUNINV", "max_runs invalid: a whole number >= 1, or null for no limit"
    )


class InvalidAuditQuery(InvalidInput):
    """An audit export refused: a bound that is no instant or duration, until not after
    since, an unknown kind or format, or neither since nor after (core.audit)."""

    code = error_code(
        "X400382AUDINV",
        "audit export invalid: since/until not an instant or duration, until <= since, "
        "unknown kind or format",
    )


class PayloadTooLarge(InvalidInput):
    """A request body over the size limit."""

    code = error_code("X413001TOOBIG", "request body too large")


class InputFileTooLarge(InvalidInput):
    """A file given to `app install`/`app sync` or an importer over the input cap."""

    code = error_code("X413340INPBIG", "input file over the 4 MiB cap of manifests and importers")


class InvalidAlertRule(InvalidInput, ValueError):
    """An alert rule that cannot be stored (the detail names the field)."""

    code = error_code("X400310ALRINV", "alert rule invalid; detail names the field")


class InvalidChannel(InvalidInput, ValueError):
    """An alert channel that cannot be stored (the detail names the field)."""

    code = error_code("X400314CHNINV", "alert channel invalid; detail names the field")


class InvalidShard(InvalidInput):
    """A shard's name, URL or CRONPLANE_SHARDS entry that cannot be used."""

    code = error_code(
        "X400420SHDINV", "shard invalid: its name, its URL, or a CRONPLANE_SHARDS entry"
    )
