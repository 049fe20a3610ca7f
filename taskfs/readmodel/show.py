"""`show ID` (text and `--json`) answered ready-made: one small file per task, one task read.

Whoever shows a task through the full reader (pydantic, YAML, the evidence's signatures)
stores what it printed in `<git dir>/taskfs/cache/show/<id>`, with the identity of every file
the answer was derived from: the settings file (where the tasks folder is), the task's
`envelope.yaml`, its `status/`, `evidence/`, `amendments/` and `intake/` folders and every file
in them (and, where it has amendments, the agent keys and their revocations), and the tasks
folder (a new task there may be a follow-up it lists) (inode, size, mtime, ctime), the
language messages are printed in, and, when an evidence file is signed, what decides its
signature's standing (where HEAD is, which commits the runner keys, and the operator's trust
list). `answer` finds the checkout, reads that one file, takes the same
identities again (a dozen `stat` calls) and prints the stored answer when every one holds;
otherwise it answers None and the full reader runs (and stores the file again). It imports
nothing but `os`, `marshal` and `taskfs.readmodel.stamps`. Deleting it changes no answer.

Only a task whose files the full reader found valid is stored (no problems to name), so a
broken file is always named by the full path. A file changed in the same clock tick as the
`stat` that keyed it could keep its key (`taskfs.readmodel.stamps`): an answer is trusted only
when every file it was derived from is older than the racy margin at the time it was stored.
Unlike the ledger cache, every status and evidence file is keyed itself, so even a file
rewritten in place (which the contract forbids) is seen.
"""

from __future__ import annotations

import os

from taskfs import __version__
from taskfs.core import layout
from taskfs.readmodel import cache, stamps

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import
if TYPE_CHECKING:
    from typing import Any

    from taskfs.readmodel.listing import CatchUp

# 5: the key of HEAD's objects (issue 36) beside issue 38's identities (4: the agent keys beside
# amendments; 3: amendments and intake); 2: `Shown`'s slots in order (issue 17)
FORMAT = 5
FOLDER = "show"
TRUST_LIST_ENV = "TASKFS_TRUSTED_RUNNERS"  # taskfs.store.keys.TRUST_LIST_ENV


class Shown:
    """A stored answer of `show ID`, by name; marshalled as its slots in order."""

    # The order is the file's format: the marshalled tuple holds the fields in this order.
    __slots__ = (  # noqa: RUF023
        "header",
        "task_id",
        "signed",
        "before",
        "stamp",
        "document",
        "text",
        "key",
    )
    header: tuple[int, str]  # (FORMAT, taskfs version)
    task_id: str
    signed: bool  # whether an evidence file is signed (its standing is in `before`)
    before: tuple[Any, ...]  # the identities it was derived from (`identity`)
    stamp: int  # when they were taken, before the files were read (ns)
    document: str  # what `show ID --json` printed
    text: str  # what `show ID` printed
    key: bytes | None  # the key of the objects HEAD held in its folder (the store's row's)

    def __init__(self, *fields: Any) -> None:
        for name, value in zip(self.__slots__, fields, strict=True):
            setattr(self, name, value)

    def fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)


def trust_list_path() -> str:
    """Where the operator's runner trust list is (`taskfs.store.keys.trust_list_path`)."""
    configured = os.environ.get(TRUST_LIST_ENV)
    if configured:
        return os.path.expanduser(configured)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "taskfs", "trusted-runners.yaml")


def _languages() -> tuple[str, ...]:
    from taskfs import i18n

    return i18n.languages()


def _entries(folder: str) -> tuple[Any, ...]:
    """A folder's identity and every file in it, by name, with its identity."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return ()
    return (
        stamps.file_key(folder),
        tuple((name, stamps.file_key(f"{folder}/{name}")) for name in names),
    )


def identity(
    root: str, git_dir: str, tasks_rel: str, task_id: str, signed: bool
) -> tuple[Any, ...]:
    """What a task's `show` answer is derived from (see the module docstring)."""
    folder = f"{root}/{tasks_rel}/{task_id}"
    amendments = _entries(f"{folder}/{layout.AMENDMENTS}")
    trust: tuple[Any, ...] = ()
    if signed:
        listed = trust_list_path()
        trust = (stamps.head_identity(git_dir), listed, stamps.file_key(listed))
    return (
        stamps.file_key(f"{root}/{stamps.CONFIG}"),
        tasks_rel,
        # The tasks folder itself: a follow-up of this task (`taskfs discover`) is a new
        # folder beside it, and `show` lists it.
        stamps.file_key(f"{root}/{tasks_rel}"),
        stamps.file_key(folder),
        stamps.file_key(f"{folder}/{stamps.ENVELOPE}"),
        _entries(f"{folder}/{stamps.STATUS}"),
        _entries(f"{folder}/{stamps.EVIDENCE}"),
        # The amendments (the contract in force) and the request it came from (issue 38).
        amendments,
        # An amendment counts where it is signed as its writer's acts are: whose key stands.
        (_entries(f"{root}/{layout.AGENT_KEYS_DIR}"), _entries(f"{root}/{layout.REVOKED_DIR}"))
        if amendments
        else (),
        _entries(f"{folder}/{layout.INTAKE}"),
        _languages(),
        trust,
    )


def _newest(found: tuple[Any, ...]) -> int:
    """The latest file time among the identities in `found`."""
    latest = 0
    for item in found:
        if type(item) is tuple:
            if len(item) == 4 and all(type(x) is int for x in item):
                latest = max(latest, stamps.newest(item))
            else:
                latest = max(latest, _newest(item))
    return latest


def path(git_dir: str, task_id: str) -> str:
    return cache.path(git_dir, FOLDER, task_id)


def store(
    root: str,
    git_dir: str,
    tasks_rel: str,
    task_id: str,
    *,
    signed: bool,
    before: tuple[Any, ...],
    stamp: int,
    document: str,
    text: str,
    key: bytes | None,
) -> None:
    """Remember a task's answer, derived from files whose identity was `before` (taken at
    `stamp`, before they were read) when HEAD held the objects `key` names in its folder (the
    store's row's key, taken before too). Nothing is stored when they changed while being
    read."""
    if identity(root, git_dir, tasks_rel, task_id, signed) != before:
        return
    shown = Shown((FORMAT, __version__), task_id, signed, before, stamp, document, text, key)
    cache.remember(git_dir, FOLDER, task_id, (), shown.fields())


def answer(task_id: str, as_json: bool, catch_up: CatchUp | None = None) -> str | None:
    """What `show ID` (`--json`) printed the last time, when every identity it was derived
    from still holds and none was too young to be trusted, and HEAD still holds the objects it
    was derived from (the store's row of the task has the key it was stored under, once the
    store is at HEAD: `catch_up`); otherwise None."""
    from taskfs.core.layout import is_task_id

    if not is_task_id(task_id):
        return None  # the full path names what is wrong with it
    try:
        found = layout.checkout(os.getcwd())
        if found is None:
            return None
        root, git_dir = found
        fields = cache.recall(git_dir, FOLDER, task_id, ())
        if fields is None:
            return None
        shown = Shown(*fields)
        if shown.header != (FORMAT, __version__) or shown.task_id != task_id:
            return None
        if _newest(shown.before) >= shown.stamp - stamps.racy_margin():
            return None  # a file as young as the stat: its key may hide a change
        if identity(root, git_dir, shown.before[1], task_id, shown.signed) != shown.before:
            return None
        from taskfs.readmodel import listing

        held = listing.key_at_head(root, git_dir, task_id, catch_up)
        if held is None or held[0] != shown.key:
            return None  # HEAD holds other objects there: the files are not what it says
        return str(shown.document if as_json else shown.text)
    except Exception:  # a file that cannot be read is rebuilt, never trusted
        return None
