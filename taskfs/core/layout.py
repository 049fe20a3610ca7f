"""Every name taskfs gives a file or folder on disk, every id rule, and finding the checkout.

One leaf module (it imports nothing of taskfs at import time) so that no command, however
light, has to reach into the store or the watcher to learn what a file is called.

In the checkout: the settings `.taskfs/config.yaml`, public keys under `.taskfs/keys/`, the
envelope schema under `.taskfs/schema/`, conversation openings under `.taskfs/conversations/`,
and the tasks folder (`tasks` unless `tasksDir` says otherwise) holding `<id>/envelope.yaml`,
`<id>/status/`, `<id>/evidence/`, `<id>/messages/` and `<id>/reads/`. In the git dir: the
checkout's private state under `<git dir>/taskfs/` (lock, journal, `cache/`).

A status file is `<seq>-<state>-<nonce>.yaml`; evidence, message and read files are
`stamped_name(at)`, the UTC time they were made, then a nonce; a message's id is
`<task>/<file stem>`. The models of what the files hold are in `taskfs.core.records`
(evidence files': `taskfs.core.evidence_records`).

Task ids: a generated id is 10 characters of lowercase Crockford base32 from 50 random bits
(the OS's CSPRNG), so no counter is ever shared through the repository. Among 100,000 tasks the
chance that any two ids collide is about n^2 / 2^51 = 4.4e-6; a collision brought in by a merge
is still detected (two envelopes under one id), never resolved silently.

Drops for the watcher, decided on names alone: paths relative to the tasks folder, split into
parts. A drop is `<name>.yaml` at the top (not hidden, not a report) or `<folder>/envelope.yaml`;
its refusal report is the same name with `+refused.yaml` in place of `.yaml`. A `+` is in no
task id and in no drop's report but its own, so a report never lands on a task folder or another
drop's report (the earlier `.refused.yaml` could: `tasks/y.yaml` and a task `y.refused.yaml`);
reports of that older spelling are still recognised, and removed with their drops. Editors'
temporary files never look like drops: `.#x` and `.x.swp` are hidden, `x~`, `4913` and `#x#`
do not end in `.yaml`, and an atomic save arrives as a move whose destination is the real name.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False  # `typing` costs the fast paths milliseconds; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime
    from pathlib import Path

# -- the checkout ------------------------------------------------------------------------------

TASKFS_DIR = ".taskfs"
CONFIG_PATH = f"{TASKFS_DIR}/config.yaml"
KEYS_DIR = f"{TASKFS_DIR}/keys"
SCHEMA_DIR = f"{TASKFS_DIR}/schema"
CONVERSATIONS = f"{TASKFS_DIR}/conversations"
ARCHIVE_DIR = f"{TASKFS_DIR}/archive"  # the archive's files (`taskfs archive`)
AGENT_KEYS_DIR = f"{KEYS_DIR}/agent"
RUNNER_KEYS_DIR = f"{KEYS_DIR}/runner"
REVOKED_DIR = f"{KEYS_DIR}/revoked/agent"  # `keys remove`'s records: one per key, never edited
DEFAULT_TASKS_DIR = "tasks"
# Folders that are the ledger whatever the settings say: every agent writes them, none owns them.
FIXED_LEDGER_FOLDERS = (".git", TASKFS_DIR)

# -- the operator's files, outside every repository (`taskfs.store.operator`) -----------------

# The runner keys the operator trusts (`taskfs.store.keys.operator_trusted_runners`).
TRUST_LIST_ENV = "TASKFS_TRUSTED_RUNNERS"
TRUST_LIST_NAME = "trusted-runners.yaml"


def operator_file(variable: str, name: str) -> str:
    """Where an operator's file is: `$variable` when it is set, else `name` under
    `$XDG_CONFIG_HOME/taskfs` (`~/.config/taskfs` when that is not set)."""
    configured = os.environ.get(variable)
    if configured:
        return os.path.expanduser(configured)
    return os.path.join(operator_home(), name)


def operator_home() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "taskfs")


# -- a task's folder ---------------------------------------------------------------------------

ENVELOPE = "envelope.yaml"
STATUS = "status"
EVIDENCE = "evidence"
MESSAGES = "messages"
READS = "reads"
INTAKE = "intake"  # a request not yet a contract (taskfs.core.intake)
AMENDMENTS = "amendments"  # new versions of the envelope (taskfs.core.amendments)
SUFFIX = ".yaml"

# -- the git dir -------------------------------------------------------------------------------

STATE_DIR = "taskfs"  # <git dir>/taskfs: per-checkout private state, never committed
CACHE_DIR = f"{STATE_DIR}/cache"  # <git dir>/taskfs/cache: caches, deletable at any time


def state_dir(git_dir: Path) -> Path:
    return git_dir / STATE_DIR


def cache_dir(git_dir: Path) -> Path:
    return git_dir / CACHE_DIR


# -- ids and agent names -----------------------------------------------------------------------

TASK_ID_RE = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
AGENT_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
# Crockford's alphabet without i, l, o, u: nothing to misread when an id is typed by hand.
_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
GENERATED_LENGTH = 10


# A label (`labels` of an envelope): a word, in any script, with no blank and no comma.
LABEL_RE = re.compile(r"[^\W_][\w.:/+-]{0,63}")


def is_label(value: object) -> bool:
    return isinstance(value, str) and LABEL_RE.fullmatch(value) is not None


def is_task_id(value: object) -> bool:
    return isinstance(value, str) and TASK_ID_RE.fullmatch(value) is not None


def is_agent_name(value: object) -> bool:
    return isinstance(value, str) and AGENT_RE.fullmatch(value) is not None


def nonce(length: int) -> str:
    """`length` random characters of the id alphabet (5 bits each)."""
    import secrets  # only writers need random names

    bits = secrets.randbits(5 * length)
    return "".join(_ALPHABET[(bits >> (5 * i)) & 31] for i in range(length))


def new_task_id() -> str:
    return nonce(GENERATED_LENGTH)


# -- ledger file names and the times in them ---------------------------------------------------

STATUS_NAME_RE = re.compile(r"(?P<seq>[0-9]{4,})-(?P<state>[a-z_]+)-(?P<nonce>[0-9a-z]{8})\.yaml")
STAMPED_NAME_RE = re.compile(
    r"(?P<stamp>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z)-(?P<nonce>[0-9a-z]{8})\.yaml"
)
NONCE_LENGTH = 8
MSG_ID_RE = re.compile(
    r"(?P<task>[a-z0-9][a-z0-9._-]{0,63})/(?P<stem>[0-9]{8}T[0-9]{6}\.[0-9]{6}Z-[0-9a-z]{8})"
)
KEY_ID_RE = re.compile(r"[0-9a-f]{16}")
MAX_SESSION_LENGTH = 200


def status_name(seq: int, state: str) -> str:
    return f"{seq:04d}-{state}-{nonce(NONCE_LENGTH)}.yaml"


def stamped_name(moment: datetime) -> str:
    """A name that sorts by the time it was made and is unique across clones."""
    from datetime import timezone

    stamp = moment.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
    return f"{stamp}-{nonce(NONCE_LENGTH)}.yaml"


def message_id(task_id: str, file_name: str) -> str:
    """The id of the message stored in `file_name` under the task's messages folder."""
    return f"{task_id}/{file_name.removesuffix('.yaml')}"


def message_location(msg_id: str) -> tuple[str, str] | None:
    """(task id, file name) of the message `msg_id` names, or None when it is no message id."""
    match = MSG_ID_RE.fullmatch(msg_id)
    if match is None:
        return None
    return match.group("task"), match.group("stem") + ".yaml"


def parse_time(value: str) -> datetime:
    """A time written by `format_time` (any ISO 8601 time with an offset) as an aware datetime."""
    from datetime import datetime

    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def parse_time_or_none(value: str) -> datetime | None:
    """`parse_time`, with a time written without an offset taken as UTC, and None for text
    that is no time at all (a hand-edited file): views show what they can."""
    from datetime import timezone

    try:
        moment = parse_time(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def format_time(moment: datetime) -> str:
    from datetime import timezone

    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


# -- folders a user may configure (checked without pydantic: used on every command) ------------


def relative_folder(value: str) -> str:
    """`value` as a folder inside the repository (`tasks`), or ValueError saying why not."""
    parts = value.strip("/").split("/")
    if value.startswith("/") or not value.strip() or any(p in ("", ".", "..") for p in parts):
        raise ValueError("must be a folder inside the repository, like 'tasks'")
    if parts[0] in FIXED_LEDGER_FOLDERS:
        raise ValueError("must not be inside .git or .taskfs")
    return "/".join(parts)


# -- drops and refusal reports in the tasks folder (the watcher's) -----------------------------

REPORT_SUFFIX = "+refused.yaml"
LEGACY_REPORT_SUFFIX = ".refused.yaml"  # what watchers before issue 16 wrote


def is_drop(parts: Sequence[str]) -> bool:
    if len(parts) == 1:
        name = parts[0]
        return _visible(name) and name.endswith(SUFFIX) and not _report_named(name)
    return len(parts) == 2 and _visible(parts[0]) and parts[1] == ENVELOPE


def is_report(parts: Sequence[str]) -> bool:
    if len(parts) == 1:
        return _visible(parts[0]) and _report_named(parts[0])
    return (
        len(parts) == 2
        and _visible(parts[0])
        and parts[1] in (report_name(ENVELOPE), legacy_report_name(ENVELOPE))
    )


def _report_named(name: str) -> bool:
    return name.endswith(REPORT_SUFFIX) or name.endswith(LEGACY_REPORT_SUFFIX)


def report_name(drop_name: str) -> str:
    return drop_name.removesuffix(SUFFIX) + REPORT_SUFFIX


def legacy_report_name(drop_name: str) -> str:
    return drop_name.removesuffix(SUFFIX) + LEGACY_REPORT_SUFFIX


def drop_name(report: str) -> str:
    if report.endswith(REPORT_SUFFIX):
        return report.removesuffix(REPORT_SUFFIX) + SUFFIX
    return report.removesuffix(LEGACY_REPORT_SUFFIX) + SUFFIX


def is_watch_hint(parts: Sequence[str], is_dir: bool) -> bool:
    """Whether an event on this path may mean work: a drop written, moved in or removed, a
    folder arriving (its files may come without events of their own), or a message."""
    if not parts or not all(_visible(p) for p in parts):
        return False
    if is_dir:
        return len(parts) == 1
    if is_drop(parts):
        return True
    return len(parts) == 3 and parts[1] == MESSAGES and parts[2].endswith(SUFFIX)


def _visible(name: str) -> bool:
    return bool(name) and not name.startswith(".")


# -- finding the checkout, from the files git keeps, without running git -----------------------


def checkout(start: str) -> tuple[str, str] | None:
    """The working tree holding `start` and its git dir, as strings (the fast paths never load
    `pathlib`); None outside a checkout or when `.git` says nothing usable."""
    here = os.path.realpath(start)
    while True:
        dot_git = here + "/.git" if here != "/" else "/.git"
        if os.path.isdir(dot_git):
            return here, dot_git
        if os.path.exists(dot_git):
            with open(dot_git, encoding="utf-8") as handle:
                text = handle.read().strip()
            if not text.startswith("gitdir:"):
                return None
            return here, os.path.realpath(os.path.join(here, text[len("gitdir:") :].strip()))
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def find_worktree(start: Path) -> Path | None:
    """The top of the git working tree holding `start`, found without running git."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def find_git_dir(root: Path) -> Path:
    """The git dir of the working tree at `root` (a linked worktree's own), read from `.git`
    without running git; `not_a_repository` when `.git` says nothing usable."""
    from taskfs.errors import fail  # the error catalogue only when it is needed

    dot_git = root / ".git"
    if dot_git.is_dir():
        return dot_git
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise fail("not_a_repository", path=str(root)) from exc
    if not text.startswith("gitdir:"):
        raise fail("not_a_repository", path=str(root))
    return (root / text[len("gitdir:") :].strip()).resolve()
