"""A way in from cron: a crontab file as a cronplane app.yaml.

:func:`translate` is a function of the file's text; :func:`read_text` is the
only I/O. Each entry line becomes one job with a ``command:`` target (the line's
command, run by ``/bin/sh -c`` like cron does) and one cron named after it.

| crontab                                   | manifest                                               |
|-------------------------------------------|--------------------------------------------------------|
| ``m h dom mon dow command``               | the 5 fields as written (cron's own syntax, Vixie OR)  |
| ``@hourly`` … ``@yearly``, ``@midnight``  | kept: cronplane reads them the same way                |
| ``@reboot``                               | not translated: it runs at boot, not at a time         |
| ``@every 5m`` and other ``@words``        | not translated: not standard cron (``every 5 minutes`` suggested) |
| the user column (``/etc/cron.d`` format)  | in the job's title; commands run as the worker's user  |
| … in a file of another name               | recognized by content (:func:`looks_like_system`), noted |
| six time fields (a seconds cron)          | not translated: cron would run ``* …`` as the command  |
| ``CRON_TZ=Zone``                          | ``timezone`` of the lines below it                     |
| no ``CRON_TZ``                            | ``--timezone`` (the zone the cron daemon ran in)       |
| ``SHELL=/bin/bash``                       | the job's ``options.shell``                            |
| ``PATH``, ``HOME``, ``TZ``, any other     | the job's ``options.env`` (``TZ`` does not move a time) |
| ``MAILTO``, ``MAILFROM``                  | reported: output is kept in the run's result, not mailed |
| ``RANDOM_DELAY``, ``CRON_*`` others       | reported: not honoured                                 |
| an unescaped ``%`` in a command           | not translated: cron turns it into standard input      |

Variables apply to the lines below them, as cron reads them. Each cron gets
``overlap: allow`` (cron starts a run even while the previous one still
runs) and its job ``max_attempts: 1`` (cron never retries a failed run).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any, Final

from cronplane.core import cron as cron_engine
from cronplane.core.cron_zones import known_zone
from cronplane.errors import ScheduleSyntax, UnknownZone
from cronplane.importers.translation import (
    Names,
    Skipped,
    Translation,
    Untranslatable,
    cron_name,
    every_hint,
)
from cronplane.input_files import read_input_text

NICKNAMES: Final = frozenset(
    {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
)
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)")
MAIL_VARIABLES: Final = frozenset(
    {"MAILTO", "MAILFROM", "CONTENT_TYPE", "CONTENT_TRANSFER_ENCODING"}
)
IGNORED_VARIABLES: Final = frozenset({"RANDOM_DELAY", "CRON_CORRECT_DST", "START_HOURS_RANGE"})
DEFAULT_SHELL: Final = "/bin/sh"
# Words that start a command without being what it is about (for its job's name).
WRAPPERS: Final = frozenset(
    {
        "nice",
        "ionice",
        "nohup",
        "env",
        "chronic",
        "sudo",
        "flock",
        "timeout",
        "run-one",
        "exec",
        "(",
        "{",
        # Shell keywords: `… && if [ … ]; then /usr/lib/php/sessionclean; fi` is about
        # sessionclean, not `if` (Debian's php cron.d line).
        "if",
        "then",
        "else",
        "elif",
        "while",
        "until",
        "do",
        "!",
    }
)
# Words that end a compound command: nothing after them names the job.
CLOSING_WORDS: Final = frozenset({"fi", "done", "esac", "}", ")"})
SETUP_WORDS: Final = frozenset(
    {"cd", "export", "set", "umask", "source", ".", "test", "[", "[[", "true", ":"}
)
# A user column's value: a login name (POSIX portable, as useradd takes them).
_ACCOUNT: Final = re.compile(r"[a-z_][a-z0-9_.-]{0,31}\$?")
# Accounts that a sixth field names in the wild (Debian's and common services'); any
# other login-shaped word counts when the word after it starts a path (`deploy /srv/…`).
KNOWN_ACCOUNTS: Final = frozenset(
    {
        "root", "daemon", "bin", "sys", "nobody", "www-data", "www", "http", "apache",
        "nginx", "postgres", "mysql", "redis", "mail", "news", "proxy", "backup", "list",
        "git", "ubuntu", "debian", "ec2-user", "centos", "admin", "deploy", "app", "odoo",
        "django", "nextcloud", "jenkins", "elasticsearch", "mongodb", "munin", "nagios",
        "smmsp", "clamav", "sympa", "asterisk", "zabbix", "prometheus", "grafana", "user",
    }
)  # fmt: skip
# A cron time field (numbers, names, `*`, `?`, ranges, steps, lists, L/W/#): a sixth one
# means a seconds field of another tool (Quartz, Spring, node-cron), not a command.
_TIME_FIELD: Final = re.compile(r"(?:[0-9*?LW#/,-]|[A-Za-z]{3})+")
MAX_TITLE: Final = 200
# Login-shaped words that are programs far more often than accounts.
SHELL_COMMANDS: Final = frozenset(
    {"cd", "test", "echo", "php", "python", "python3", "sh", "bash", "perl", "ruby", "node",
     "curl", "wget", "find", "rm", "cp", "mv", "tar", "rsync", "sleep", "true", "if", "for",
     "run-parts", "nice", "flock", "timeout", "env", "sudo", "docker", "make", "git"}
)  # fmt: skip


def read_text(path: Path) -> str:
    """The file's text; InvalidRequest when it cannot be read, InputFileTooLarge over 4 MiB."""
    return read_input_text(path)


def is_system_crontab(path: Path) -> bool:
    """Whether a path holds the system format (a user column): /etc/crontab, */cron.d/*."""
    return path.parent.name == "cron.d" or path.as_posix() == "/etc/crontab"


def looks_like_system(text: str) -> list[str] | None:
    """The accounts of the user column when the file's content shows one, else None.

    The system format is recognized by what its sixth field holds (a third after an
    `@nickname`): a login name on every entry line, at least one of them a well-known
    account or followed by a path (`root /usr/bin/job`, `deploy /srv/run.sh`), and
    never a seconds field. A command word that happens to be login-shaped (`php`,
    `cd`) is followed by anything but a path, so it does not pass the second test.
    """
    accounts: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or _ASSIGNMENT.fullmatch(line):
            continue
        words = line.split(None, 7)
        at = 1 if line.startswith("@") else 5
        if len(words) < at + 2:
            return None
        word, following = words[at], words[at + 1]
        if _ACCOUNT.fullmatch(word) is None or word in SHELL_COMMANDS:
            return None
        if word not in KNOWN_ACCOUNTS and not following.startswith(("/", "~", "$", "[", "cd")):
            return None
        accounts.append(word)
    return sorted(set(accounts)) or None


def translate(text: str, *, stack: str, system: bool = False, timezone: str = "UTC") -> Translation:
    """Translate a crontab's text; `system` when lines carry a user column, `timezone`
    the cron daemon's zone (for lines no CRON_TZ covers)."""
    known_zone(timezone)  # UnknownZone: a bad --timezone is the caller's error
    jobs: dict[str, dict[str, Any]] = {}
    crons: dict[str, dict[str, Any]] = {}
    names = Names()
    skipped: list[Skipped] = []
    notes: list[str] = []
    env: dict[str, str] = {}
    shell = DEFAULT_SHELL
    zone: str | None = None
    users: set[str] = set()
    uncovered = 0  # translated lines no CRON_TZ covers
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"line {number}"
        assignment = _ASSIGNMENT.fullmatch(line)
        if assignment is not None:
            name, value = assignment.group(1), _unquote(assignment.group(2).strip())
            if name == "CRON_TZ":
                zone = value or None
            elif name == "SHELL":
                shell = value or DEFAULT_SHELL
            elif name in MAIL_VARIABLES:
                notes.append(
                    f"{where}: {name}={value} not honoured: cronplane mails nothing, a "
                    "command's output is kept in its run's result (cronplane queue info ID)"
                )
            elif name in IGNORED_VARIABLES:
                notes.append(f"{where}: {name}={value} not honoured")
            else:
                env[name] = value
                if name == "TZ":
                    notes.append(
                        f"{where}: TZ={value} is passed to the commands' environment; "
                        "it does not change when they run (CRON_TZ does)"
                    )
            continue
        label = f"{where}: {line[:80]}"
        try:
            cron, user, command = _entry(line, system)
            entry_zone = zone or timezone
            try:
                known_zone(entry_zone)
            except UnknownZone as error:
                raise Untranslatable(f"CRON_TZ={entry_zone} is not a known zone") from error
        except Untranslatable as error:
            skipped.append(Skipped(label, str(error)))
            continue
        options: dict[str, Any] = {"max_attempts": 1}
        if shell != DEFAULT_SHELL:
            options["shell"] = shell
        if env:
            options["env"] = dict(env)
        as_user = f" (as {user})" if user else ""
        if user:
            users.add(user)
        job = names.claim(_command_name(command))
        jobs[job] = {
            "title": f"crontab {where}{as_user}: {command}"[:MAX_TITLE],
            "target": f"command:{command}",
            "options": options,
        }
        uncovered += zone is None
        declared: dict[str, Any] = {"job": job, "cron": cron}
        if entry_zone != "UTC":
            declared["timezone"] = entry_zone
        declared["overlap"] = "allow"
        crons[job] = declared
    if users:
        notes.append(
            f"the user column ({', '.join(sorted(users))}) is in each job's title: commands "
            "run as the worker's user; run a worker as that user to keep it"
        )
    if uncovered:
        notes.append(f"{uncovered} line(s) without CRON_TZ are read in {timezone} (--timezone)")
    if crons:
        notes.append(
            "command: jobs need CRONPLANE_ALLOW_COMMAND_TARGETS=1 on the server and the "
            "workers, and a platform admin to install them"
        )
    document: dict[str, Any] = {"name": cron_name(stack, "crontab"), "jobs": jobs, "crons": crons}
    return Translation(document, skipped, notes, command="crontab", noun="crontab entries")


def _entry(line: str, system: bool) -> tuple[str, str | None, str]:
    """(cron, user, command) of one entry line; Untranslatable otherwise."""
    if line.startswith("@"):
        nickname, *rest = line.split(None, 2 if system else 1)
        if nickname == "@reboot":
            raise Untranslatable("@reboot runs when the cron daemon starts, not at a time")
        if nickname.lower() == "@every":
            every = " ".join(line.split(None, 2)[:2])
            raise Untranslatable(f"{every} is not standard cron: {every_hint(every)}")
        if nickname.lower() not in NICKNAMES:
            raise Untranslatable(f"{nickname} is not standard cron (no such @-schedule)")
        cron = nickname.lower()
    else:
        cron_fields, rest = line.split(None, 5)[:5], line.split(None, 6 if system else 5)[5:]
        cron = " ".join(cron_fields)
        sixth = rest[0].split(None, 1)[0] if rest else ""
        if _TIME_FIELD.fullmatch(sixth) and (any(c in sixth for c in "*?/,") or sixth.isdigit()):
            seconds_first = f"{' '.join(cron_fields[1:])} {sixth}"
            raise Untranslatable(
                f"6 time fields ({cron} {sixth}): a cron with seconds (Quartz, Spring, "
                f"node-cron), which cron itself would run as `{sixth} …`; if the first field "
                f"is seconds and it is 0, write `{seconds_first}`, else `every N seconds`"
            )
    if len(rest) < (2 if system else 1):
        expected = "a user and a command" if system else "a command"
        raise Untranslatable(f"not a crontab line: expected the time, then {expected}")
    user = rest[0] if system else None
    command = _unescape(rest[-1].strip())
    try:
        cron_engine.parse(cron, seed="crontab")
    except ScheduleSyntax as error:
        raise Untranslatable(f"{cron!r} is not a cron cronplane reads: {error.message}") from error
    return cron, user, command


def _unescape(command: str) -> str:
    """The command with `\\%` as `%`; Untranslatable for a bare `%` (cron's stdin marker)."""
    out: list[str] = []
    index = 0
    while index < len(command):
        char = command[index]
        if char == "\\" and command[index + 1 : index + 2] == "%":
            out.append("%")
            index += 2
            continue
        if char == "%":
            raise Untranslatable(
                "an unescaped % (cron sends what follows as standard input): write it as \\% "
                "or move the input into the command"
            )
        out.append(char)
        index += 1
    return "".join(out)


def _unquote(value: str) -> str:
    """A variable's value without one pair of surrounding quotes, as cron reads it."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _command_name(command: str) -> str:
    """A job name from a command: the file name of the program it is about, past `cd …
    &&`, `VAR=value` and wrappers like `nice` (`cd /srv && ./nightly.sh` → `nightly.sh`)."""
    for segment in re.split(r"&&|\|\||;", command):
        try:
            words = shlex.split(segment)
        except ValueError:
            words = segment.split()
        words = [w for w in words if _ASSIGNMENT.fullmatch(w) is None]
        while words and (words[0] in WRAPPERS or words[0].startswith("-") or words[0].isdigit()):
            words.pop(0)
        if words and words[0] not in SETUP_WORDS and words[0] not in CLOSING_WORDS:
            return cron_name(words[0].rsplit("/", 1)[-1], "command")
    return "command"
