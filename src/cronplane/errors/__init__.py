"""The error tree: one class per code, the class declaring its code.

::

    CronplaneError                       (code, message, detail; status and exit code follow)
    ├── InvalidInput                     400 class, CLI exit 2
    │   ├── ScheduleSyntax               X400003INVSCH  the parser's own rejection
    │   ├── CronRejected                 X400001CRNINV  the service's wrapping of ScheduleSyntax
    │   ├── InvalidPayload               X400002PAYINV
    │   ├── UnknownZone                  X400004ZONINV
    │   ├── UnknownHolidays              X400364HOLINV  a country or subdivision without holidays data
    │   ├── InvalidName                  X400005NAMINV
    │   ├── InvalidManifest              X400006MANINV
    │   ├── YamlOverLimit                X400340YAMLIM  YAML over a loader limit (names it, and the line)
    │   ├── YamlDuplicateKey             X400341YAMDUP  a YAML mapping names a key twice
    │   ├── InvalidOidcSettings          X400390OIDCFG  a CRONPLANE_OIDC_* setting: the server refuses to start
    │   ├── InvalidShard                 X400420SHDINV  a shard's name or URL, or a CRONPLANE_SHARDS entry
    │   ├── InvalidRequest               X400007REQINV
    │   ├── InvalidTarget                X400008TGTINV
    │   ├── UnsupportedDatabase          X400009DBUNSP  a database URL not sqlite or postgresql
    │   ├── IntervalTooShort             X400010INTMIN  fires more often than the minimum allows
    │   ├── InvalidJitter                X400100JITINV  jitter not whole seconds >= 0
    │   ├── JitterTooLong                X400101JITLNG  jitter >= the cron's shortest interval
    │   ├── InvalidUntil                 X400102UNTINV  pause until unparsable, not future, or none for missed
    │   ├── InvalidBackfill              X400103BKFRNG  backfill range unparsable or to <= from
    │   ├── BackfillTooLarge             X400104BKFCAP  backfill range over the cap
    │   ├── InvalidWindow                X400150WININV  start_at/end_at not an instant, or end before start
    │   ├── InvalidMaxRuns               X400151RUNINV  max_runs not a whole number >= 1
    │   ├── InvalidAlertRule             X400310ALRINV
    │   ├── InvalidChannel               X400314CHNINV
    │   ├── InvalidAuditQuery            X400382AUDINV  an audit export's bounds, kind or format
    │   ├── PayloadTooLarge              X413001TOOBIG
    │   └── InputFileTooLarge            X413340INPBIG  a manifest or importer input over 4 MiB
    ├── Unauthenticated                  X401001AUTHRQ  CLI exit 6
    │   └── OidcSignInRejected           X401390OIDREJ  an OIDC sign-in failed a check (state, ID token)
    ├── Forbidden                        X403001FORBID  CLI exit 6
    │   ├── CommandTargetsOff            X403250CMDOFF  `command:` targets not enabled here
    │   ├── CommandJobForbidden          X403251CMDADM  only a platform admin may set one
    │   ├── PythonTargetForbidden        X403252PYDENY  a python: module outside CRONPLANE_PYTHON_TARGETS
    │   ├── OutboundAddressDenied        X403270OUTDNY  a webhook/channel address the platform denies
    │   └── OidcNoRole                   X403390OIDROL  an OIDC user whose claims map to no role
    ├── NotFound                         404 class, CLI exit 3
    │   ├── ScheduleNotFound             X404902SCHNFD
    │   ├── JobNotFound                  X404903JOBNFD
    │   ├── QueueItemNotFound            X404904ITMNFD
    │   ├── TokenNotFound                X404905TOKNFD
    │   ├── TenantNotFound               X404906TENNFD  another tenant: learns nothing
    │   ├── ShardNotFound                X404420SHDNFD  no shard of that name
    │   ├── AlertRuleNotFound            X404311ALRNFD
    │   ├── AlertNotFound                X404313ALTNFD
    │   ├── ChannelNotFound              X404315CHNNFD
    │   ├── CalendarNotFound             X404360CALNFD
    │   ├── VersionNotFound              X404380VERNFD  no such version of the row (or pruned)
    │   ├── JobVersionNotFound           X404384JVRNFD  no such version of the job (or pruned)
    │   ├── NothingToRestore             X404381RSTNON  no deleted row of that name within the retention
    │   └── RouteNotFound                X404001NOROUT  no such API path
    ├── MethodNotAllowed                 X405001METHOD  CLI exit 2
    ├── RunTimedOut                      X408203RUNTMO  an item's error: ran past its timeout (never raised to a caller)
    ├── Conflict                         409 class, CLI exit 4
    │   ├── ScheduleExists               X409900SCHDPL
    │   ├── AppOwned                     X409902APPOWN
    │   ├── JobExists                    X409903JOBDPL
    │   ├── JobInactive                  X409904JOBINA
    │   ├── InvalidState                 X409905STATEX
    │   │   └── ItemFinished             X409200ITMFIN  cancel of an item already finished
    │   ├── BackfillOverlap              X409105BKFACT  non-overlapping backfill, item active
    │   ├── AlertRuleExists              X409312ALRDPL
    │   ├── ChannelExists                X409316CHNDPL
    │   ├── VersionJobGone               X409380VERJOB  rollback/restore to a version whose job is gone
    │   ├── RestoreNameTaken             X409381RSTDPL  restore of a name a live row holds
    │   ├── PromoteConflict              X409382PRMCHG  promote: a row moved since the diff (or during it)
    │   ├── PromoteOwnership             X409383PRMOWN  promote --only of a row owned differently
    │   ├── TenantMoving                 X409420SHDMOV  the tenant is moving between shards
    │   └── ShardDraining                X409421SHDDRN  onto a draining shard, or removing one with tenants
    ├── StaleRevision                    X412001REVSTL  CLI exit 5
    ├── QuotaExceeded                    a tenant quota (core.quotas), CLI exit 9
    │   ├── ScheduleQuotaExceeded        X403260QTASCH  max_schedules reached
    │   ├── JobQuotaExceeded             X403261QTAJOB  max_jobs reached
    │   ├── IntervalUnderQuota           X403262QTAINT  fires more often than the tenant's min_interval
    │   └── QueueQuotaExceeded           X429260QTAQUE  max_queued reached (a volume: retry later)
    ├── Unavailable                      X503001DBDOWN  CLI exit 7
    │   └── OidcUnavailable              X503390OIDDWN  the OIDC provider did not answer
    ├── ContainerEngineMissing           X503253CTRENG  a container: item on a worker with neither podman nor docker
    └── InternalError                    X500001INTERN  CLI exit 1: a bug, never bad input

Raise the most specific class; never a bare CronplaneError. The roots and the
codes that stand alone are in `base.py`; each branch's classes in a module of
its own (`invalid.py`, `access.py` with the quotas, `missing.py`,
`conflicts.py`; the console's OIDC sign-in, across branches, in `signin.py`); a new code goes to its branch's module and into this tree.
Everything is imported from `cronplane.errors`.
"""

from __future__ import annotations

from cronplane.errors.access import (
    CommandJobForbidden,
    CommandTargetsOff,
    IntervalUnderQuota,
    JobQuotaExceeded,
    OutboundAddressDenied,
    PythonTargetForbidden,
    QueueQuotaExceeded,
    ScheduleQuotaExceeded,
)
from cronplane.errors.base import (
    Conflict,
    ContainerEngineMissing,
    CronplaneError,
    Forbidden,
    InternalError,
    InvalidInput,
    InvalidState,
    MethodNotAllowed,
    NotFound,
    QuotaExceeded,
    RunTimedOut,
    StaleRevision,
    Unauthenticated,
    Unavailable,
    exit_code_of,
)
from cronplane.errors.conflicts import (
    AlertRuleExists,
    AppOwned,
    BackfillOverlap,
    ChannelExists,
    ItemFinished,
    JobExists,
    JobInactive,
    PromoteConflict,
    PromoteOwnership,
    RestoreNameTaken,
    ScheduleExists,
    ShardDraining,
    TenantMoving,
    VersionJobGone,
)
from cronplane.errors.invalid import (
    BackfillTooLarge,
    CronRejected,
    InputFileTooLarge,
    IntervalTooShort,
    InvalidAlertRule,
    InvalidAuditQuery,
    InvalidBackfill,
    InvalidChannel,
    InvalidJitter,
    InvalidManifest,
    InvalidMaxRuns,
    InvalidName,
    InvalidPayload,
    InvalidRequest,
    InvalidShard,
    InvalidTarget,
    InvalidUntil,
    InvalidWindow,
    JitterTooLong,
    PayloadTooLarge,
    ScheduleSyntax,
    UnknownHolidays,
    UnknownZone,
    UnsupportedDatabase,
    YamlDuplicateKey,
    YamlOverLimit,
)
from cronplane.errors.missing import (
    AlertNotFound,
    AlertRuleNotFound,
    CalendarNotFound,
    ChannelNotFound,
    JobNotFound,
    JobVersionNotFound,
    NothingToRestore,
    QueueItemNotFound,
    RouteNotFound,
    ScheduleNotFound,
    ShardNotFound,
    TenantNotFound,
    TokenNotFound,
    VersionNotFound,
)
from cronplane.errors.signin import (
    InvalidOidcSettings,
    OidcNoRole,
    OidcSignInRejected,
    OidcUnavailable,
)

__all__ = [
    "AlertNotFound",
    "AlertRuleExists",
    "AlertRuleNotFound",
    "AppOwned",
    "BackfillOverlap",
    "BackfillTooLarge",
    "CalendarNotFound",
    "ChannelExists",
    "ChannelNotFound",
    "CommandJobForbidden",
    "CommandTargetsOff",
    "Conflict",
    "ContainerEngineMissing",
    "CronRejected",
    "CronplaneError",
    "Forbidden",
    "InputFileTooLarge",
    "InternalError",
    "IntervalTooShort",
    "IntervalUnderQuota",
    "InvalidAlertRule",
    "InvalidAuditQuery",
    "InvalidBackfill",
    "InvalidChannel",
    "InvalidInput",
    "InvalidJitter",
    "InvalidManifest",
    "InvalidMaxRuns",
    "InvalidName",
    "InvalidOidcSettings",
    "InvalidPayload",
    "InvalidRequest",
    "InvalidShard",
    "InvalidState",
    "InvalidTarget",
    "InvalidUntil",
    "InvalidWindow",
    "ItemFinished",
    "JitterTooLong",
    "JobExists",
    "JobInactive",
    "JobNotFound",
    "JobQuotaExceeded",
    "JobVersionNotFound",
    "MethodNotAllowed",
    "NotFound",
    "NothingToRestore",
    "OidcNoRole",
    "OidcSignInRejected",
    "OidcUnavailable",
    "OutboundAddressDenied",
    "PayloadTooLarge",
    "PromoteConflict",
    "PromoteOwnership",
    "PythonTargetForbidden",
    "QueueItemNotFound",
    "QueueQuotaExceeded",
    "QuotaExceeded",
    "RestoreNameTaken",
    "RouteNotFound",
    "RunTimedOut",
    "ScheduleExists",
    "ScheduleNotFound",
    "ScheduleQuotaExceeded",
    "ScheduleSyntax",
    "ShardDraining",
    "ShardNotFound",
    "StaleRevision",
    "TenantMoving",
    "TenantNotFound",
    "TokenNotFound",
    "Unauthenticated",
    "Unavailable",
    "UnknownHolidays",
    "UnknownZone",
    "UnsupportedDatabase",
    "VersionJobGone",
    "VersionNotFound",
    "YamlDuplicateKey",
    "YamlOverLimit",
    "exit_code_of",
]
