"""`ls --json` and `ready --json`, answered ready-made: the hot path of the commands agents
call most.

Whenever the ledger cache (`taskfs.store.index`) is written, both documents are rendered from
the projection (`build`) and written beside it (`<git dir>/taskfs/cache/prepared-vN`), with the
identities of everything they were derived from: the settings file, the tasks folder, and each
task's `envelope.yaml` and `status/` (the cache's own keys, `stamps.Folder.key`). `answer`
finds the checkout, reads that one file and checks the identities: two `stat` calls per task
through an open handle on the tasks folder, nothing parsed, nothing imported but this package's
`stamps` and the filters it shares with the full listings (`taskfs.core.shown`). When every
identity holds it prints the stored document (filtered by `--state`, `--to`, `--context` or
the agent); when anything differs or cannot be read it answers None, and the caller asks the
cache, which catches up and writes this file again. Deleting it changes no answer.

Racily clean files (`stamps`): each key is stored with how long before its `stat` the file
last changed (its age); an identity too young to be trusted is checked against the bytes it
was derived from. Once such a task's files are old enough, `answer` stores the file again with
their new age, so the check is paid once, not on every call.

The file is `Answers` marshalled as a plain tuple in the order of its slots: that class is the
format's one description. A writer that changed a few tasks stores a `Delta` beside it.
"""

from __future__ import annotations

import marshal
import os
import time

from taskfs import __version__
from taskfs.core import shapes
from taskfs.core.layout import checkout
from taskfs.readmodel.stamps import (
    CONFIG,
    Folder,
    cache_dir,
    dump,
    file_digest,
    file_key,
    folder_digest,
    head_identity,
    newest,
    racy_margin,
    task_ids,
)

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any

    from taskfs.readmodel.cache import CacheRow
    from taskfs.readmodel.projection import Summary
    from taskfs.readmodel.stamps import FileKey, FolderDigest, Key

    # A task's row in `ls` as (state, to, contextID, JSON text).
    Shown = tuple[str, str | None, str, str]
    # Whether HEAD moved without changing the tasks folder (checkout, git dir, token, tasks
    # folder): asked of the store when the stored HEAD no longer holds (a commit of code).
    HeadCheck = Callable[[str, str, bytes, str], bool]

FORMAT = 6  # 6: ready follows the lineage (issue 29); 5: a delta may add tasks (issue 19)
NAME = f"prepared-v{FORMAT}"
SETTINGS, FOLDER = "<settings>", "<folder>"  # not task ids: those are [a-z0-9._-]


class Answers:
    """The prepared answers and what they were derived from, by name."""

    # The order is the file's format: the marshalled tuple holds the fields in this order.
    __slots__ = (  # noqa: RUF023
        "header",
        "settings",
        "folder",
        "ids",
        "keys",
        "trusted",
        "young",
        "states",
        "opening",
        "ls_all",
        "ls_rows",
        "ready_all",
        "ready_rows",
        "token",
        "listed_ids",
    )
    header: tuple[int, str, str]  # (FORMAT, taskfs version, the tasks folder's path)
    settings: tuple[FileKey, int, bytes]  # the settings file's identity, age, digest
    folder: tuple[FileKey, int]  # the tasks folder's identity and age
    ids: tuple[str, ...]  # every task folder, sorted
    keys: tuple[Key, ...]  # their identities, in the order of `ids`
    trusted: int  # the youngest age among the identities trusted by their keys
    young: dict[str, tuple[int, FolderDigest]]  # identities too young to be trusted, by id
    states: tuple[str, ...]  # the lifecycle's state names (an unknown `--state`: click's)
    opening: str  # the document up to its rows
    ls_all: str  # the rows of `ls`, joined
    ls_rows: list[Shown]  # the rows of `ls`
    ready_all: str  # the rows of `ready`, joined
    ready_rows: list[tuple[str | None, str]]  # the rows of `ready` (None: anyone's)
    token: bytes  # names them together with the cache's rows and `cache/head`
    listed_ids: tuple[str, ...]  # the ids of `ls_rows`, in order

    def __init__(self, *fields: Any) -> None:
        for name, value in zip(self.__slots__, fields, strict=True):
            setattr(self, name, value)

    def fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def tasks_rel(self) -> str:
        return str(self.header[2])


class Delta:
    """A writer's change to a few tasks since the answers under `token` were stored: their
    new identities and rows, `{task id: (key, age, folder_digest, Shown or None)}` (a task
    not in the answers was added: `new`), the whole `ready` answer, and the tasks folder's
    identity and age as the writer found it (None: not known to the writer; a delta that
    adds tasks always has it)."""

    __slots__ = ("token", "changed", "ready", "folder")  # noqa: RUF023 (the order is the format)
    token: bytes
    changed: dict[str, Any]
    ready: list[Any]
    folder: tuple[FileKey, int] | None

    def __init__(
        self,
        token: bytes,
        changed: dict[str, Any],
        ready: list[Any],
        folder: tuple[FileKey, int] | None = None,
    ) -> None:
        self.token, self.changed, self.ready, self.folder = token, changed, ready, folder

    def fields(self) -> tuple[Any, ...]:
        return self.token, self.changed, self.ready, self.folder


def path(git_dir: str) -> str:
    return f"{cache_dir(git_dir)}/{NAME}"


def delta_path(path: str) -> str:
    return path + ".delta"


# -- writing: the answers rendered from the projection -------------------------------------------


def shown_row(summary: Summary | None) -> str | None:
    """A task's row in `ls` and `ready` as JSON text, rendered once per change of its files;
    None for a task that is not listed."""
    if summary is None or not summary.listed:
        return None
    import json

    return json.dumps(summary.row(), ensure_ascii=False)


def opening(schema_version: int) -> str:
    """The listing document up to its rows (`taskfs.core.shapes.document`, as text)."""
    return shapes.listing_head(schema_version)


def _listed(summary: Summary | None, row: CacheRow) -> Shown | None:
    if summary is None or row.shown is None:
        return None
    env = summary.envelope
    return (summary.state, env.recipient, env.context_id, row.shown)


def _ready(tasks: Mapping[str, Summary]) -> dict[str, str | None]:
    """The claimable tasks, by id, with who may claim each (None: anyone)."""
    from taskfs.core.readiness import claimable

    return {task.id: task.envelope.recipient for task in claimable(tasks)}


def build(
    path: str,
    *,
    rows: Mapping[str, CacheRow],
    tasks: Mapping[str, Summary],
    tasks_rel: str,
    settings: tuple[FileKey, int, bytes],
    folder: tuple[FileKey, int],
    states: Iterable[str],
    schema_version: int,
    token: bytes,
) -> None:
    """Render and store both documents from the cache's `rows` (the tasks in order) and their
    projections `tasks`. `settings` is the settings file's identity, age and digest of its
    bytes; `folder` the tasks folder's identity and the time it was taken; `token` names them
    together with the ledger cache's rows and with `cache/head`, where HEAD stood when they were
    derived (whether a file is committed can change with HEAD alone)."""
    margin = racy_margin()
    ready_for = _ready(tasks)
    keys: list[Key] = []
    young: dict[str, tuple[int, FolderDigest]] = {}
    trusted = margin + 1
    listed: list[Shown] = []
    listed_ids: list[str] = []
    ready: list[tuple[str | None, str]] = []
    for task_id, row in rows.items():
        key = row.key
        keys.append(key)
        age = row.stamp - max(key[2], key[3], key[5], key[6])  # newest(key), inlined
        if age <= margin:
            young[task_id] = (age, row.folder_digest)
        elif age < trusted:
            trusted = age
        shown = _listed(tasks.get(task_id), row)
        if shown is not None:
            listed.append(shown)
            listed_ids.append(task_id)
            if task_id in ready_for:
                ready.append((ready_for[task_id], shown[3]))
    answers = Answers(
        (FORMAT, __version__, tasks_rel),
        settings,
        (folder[0], folder[1] - newest(folder[0])),
        tuple(rows),
        tuple(keys),
        trusted,
        young,
        tuple(states),
        opening(schema_version),
        ", ".join(row[3] for row in listed),
        listed,
        ", ".join(text for _to, text in ready),
        ready,
        token,
        tuple(listed_ids),
    )
    dump(path, answers.fields())


def build_delta(
    path: str,
    token: bytes,
    *,
    rows: Mapping[str, CacheRow],
    changed: Iterable[str],
    tasks: Mapping[str, Summary],
    folder: tuple[FileKey, int] | None = None,
) -> None:
    """Store the new identities and rows of the tasks `changed` since the answers under
    `token` were stored, and the whole `ready` answer (see `Delta`). `folder`: the tasks
    folder's identity and the time it was taken, when tasks were added."""
    ready_for = _ready(tasks)
    ready = [(ready_for[t], row.shown) for t, row in rows.items() if t in ready_for and row.shown]
    listed: dict[str, Any] = {}
    for task_id in changed:
        row = rows[task_id]
        age = row.stamp - newest(row.key)
        listed[task_id] = (row.key, age, row.folder_digest, _listed(tasks.get(task_id), row))
    aged = None if folder is None else (folder[0], folder[1] - newest(folder[0]))
    dump(delta_path(path), Delta(token, listed, ready, aged).fields())


def delta_folder(path: str, token: bytes) -> tuple[FileKey, int] | None:
    """The tasks folder's identity and the time it was taken, as the delta under `token`
    stored it (None: no such delta, or none named it), for a writer that did not list the
    tasks and adds none to the delta."""
    try:
        with open(delta_path(path), "rb") as handle:
            delta = Delta(*marshal.loads(handle.read()))
    except Exception:  # no usable delta: nothing to carry forward
        return None
    if delta.token != token or delta.folder is None:
        return None
    key, age = delta.folder
    return key, age + newest(key)


# -- reading (the hot path: `os`, `marshal`, `time`, `stamps` and `taskfs.core.shown`) ---------


def answer(
    command: str, options: dict[str, str], agent: str | None, moved: HeadCheck | None = None
) -> str | None:
    """`ls --json` (options `--state`, `--to`, `--context`) or `ready --json` (for `agent`),
    as the full path would print it, or None when the stored answer cannot be vouched for.
    `moved` is asked when HEAD moved since the answers were stored (None: they are not
    vouched for then)."""
    try:
        found = checkout(os.getcwd())
        if found is None:
            return None
        root, git_dir = found
        stored = path(git_dir)
        with open(stored, "rb") as handle:
            data = Answers(*marshal.loads(handle.read()))
        if data.header != (FORMAT, __version__, data.tasks_rel()):
            return None
        delta = _with_delta(stored, data)
        if options.get("--state", "submitted") not in data.states:
            return None  # the full path names the states there are
        if not _same_head(git_dir, data.token) and not (
            moved is not None and moved(root, git_dir, data.token, data.tasks_rel())
        ):
            return None  # HEAD moved: which files are committed is for the cache to say again
        settled = _settled(root, data)
        if settled is None:
            return None
        if settled and (delta is None or not _settle_delta(stored, delta, settled)):
            _settle(stored, data, settled)
        return _document(data, command, options, agent)
    except Exception:  # a file that cannot be read is rebuilt, never trusted
        return None


def _same_head(git_dir: str, token: bytes) -> bool:
    """Whether HEAD stands where it stood when the answers with `token` were derived, or was
    found since to have moved without changing any task (`taskfs.store.index`)."""
    with open(f"{cache_dir(git_dir)}/head", "rb") as handle:
        stored, head = marshal.loads(handle.read())
    return bool(stored == token and head[0] == head_identity(git_dir))


def _with_delta(path: str, data: Answers) -> Delta | None:
    """Apply a writer's delta (`build_delta`) to `data`, and return it; a delta written for
    other answers (another token) is ignored. Applying it twice changes nothing (`_settle`
    may store answers it was applied to under the same token)."""
    try:
        with open(delta_path(path), "rb") as handle:
            delta = Delta(*marshal.loads(handle.read()))
    except FileNotFoundError:
        return None
    if delta.token != data.token:
        return None
    where = {task_id: i for i, task_id in enumerate(data.ids)}
    if not where.keys() >= delta.changed.keys():
        _add_tasks(data, delta)
        where = {task_id: i for i, task_id in enumerate(data.ids)}
    margin = racy_margin()
    keys, young = list(data.keys), dict(data.young)
    listed_at = {task_id: i for i, task_id in enumerate(data.listed_ids)}
    listed = list(data.ls_rows)
    for task_id, (key, age, print_, shown) in delta.changed.items():
        keys[where[task_id]] = key
        young.pop(task_id, None)
        if age <= margin:
            young[task_id] = (age, print_)
        else:
            data.trusted = min(data.trusted, age)
        if (task_id in listed_at) != (shown is not None):
            raise ValueError(task_id)  # its place in the listing changed: not a delta's to say
        if shown is not None:
            listed[listed_at[task_id]] = shown
    data.keys, data.young, data.ls_rows = tuple(keys), young, listed
    data.ls_all = ", ".join(row[3] for row in listed)
    data.ready_all = ", ".join(text for _to, text in delta.ready)
    data.ready_rows = delta.ready
    if delta.folder is not None:
        data.folder = delta.folder
    return delta


def _add_tasks(data: Answers, delta: Delta) -> None:
    """Make room in `data` for the tasks `delta` adds (their identities and rows are then
    set as any changed task's), in the sorted order of the tasks folder, and take the
    folder's new identity. A delta that adds tasks without it is none this version wrote."""
    if delta.folder is None:
        raise ValueError("tasks added without the folder's identity")
    key_of = dict(zip(data.ids, data.keys, strict=True))
    shown_of = dict(zip(data.listed_ids, data.ls_rows, strict=True))
    for task_id, (key, _age, _print, shown) in delta.changed.items():
        if task_id not in key_of:
            key_of[task_id] = key
            if shown is not None:
                shown_of[task_id] = shown
    data.ids = tuple(sorted(key_of))
    data.keys = tuple(key_of[task_id] for task_id in data.ids)
    data.listed_ids = tuple(task_id for task_id in data.ids if task_id in shown_of)
    data.ls_rows = [shown_of[task_id] for task_id in data.listed_ids]


def _settle_delta(path: str, delta: Delta, settled: dict[str, int]) -> bool:
    """`_settle` for tasks a writer's delta names (and the tasks folder, when it added tasks):
    their new ages go in the delta, so that the first listings after a write never store the
    whole answers again. False when an identity outside the delta settled (the whole file is
    stored then)."""
    own = set(delta.changed) | ({FOLDER} if delta.folder is not None else set())
    if not set(settled) <= own:
        return False
    margin = racy_margin()
    if all(age <= margin for age in settled.values()):
        return True  # nothing is old enough yet
    with open(delta_path(path), "rb") as handle:
        if marshal.loads(handle.read()) != delta.fields():
            return True  # a writer stored a newer delta meanwhile: leave it whole
    changed = dict(delta.changed)
    folder = delta.folder
    for task_id, age in settled.items():
        if task_id == FOLDER and folder is not None:
            folder = (folder[0], age)
            continue
        key, _age, print_, shown = changed[task_id]
        changed[task_id] = (key, age, print_, shown)
    dump(delta_path(path), Delta(delta.token, changed, delta.ready, folder).fields())
    return True


def _settled(root: str, data: Answers) -> dict[str, int] | None:
    """None when an identity the answers were derived from has changed. Otherwise the young
    identities (see the module docstring) just checked against bytes, with their ages now:
    the settings file's and the tasks folder's under SETTINGS and FOLDER (which no task id
    can be), the tasks' under their ids."""
    margin = racy_margin()
    stamp = time.time_ns()
    settings_key = file_key(f"{root}/{CONFIG}")
    if settings_key != data.settings[0]:
        return None  # the settings (where the tasks folder is) may have changed
    settled: dict[str, int] = {}
    if data.settings[1] <= margin:
        if file_digest(f"{root}/{CONFIG}") != data.settings[2]:
            return None
        settled[SETTINGS] = stamp - newest(settings_key)
    tasks_dir = f"{root}/{data.tasks_rel()}"
    folder_key = file_key(tasks_dir)
    if folder_key != data.folder[0] or data.trusted <= margin:
        return None
    if data.folder[1] <= margin:
        if task_ids(tasks_dir) != list(data.ids):
            return None
        settled[FOLDER] = stamp - newest(folder_key)
    opened = Folder(tasks_dir)
    try:
        for task_id, key in zip(data.ids, data.keys, strict=True):
            if opened.key(task_id) != key:
                return None
    finally:
        opened.close()
    checked = {t: entry for t, entry in data.young.items() if entry[0] <= margin}
    if checked:
        key_of = dict(zip(data.ids, data.keys, strict=True))
        for task_id, (_age, print_) in checked.items():
            if folder_digest(f"{tasks_dir}/{task_id}") != print_:
                return None
            settled[task_id] = stamp - newest(key_of[task_id])
    return settled


def _document(data: Answers, command: str, options: dict[str, str], agent: str | None) -> str:
    from taskfs.core.shown import listed, offered_to

    if command == "ready":
        if agent is None:
            return f"{data.opening}{data.ready_all}]}}"
        rows = [text for to, text in data.ready_rows if offered_to(to, agent)]
    elif not options:
        return f"{data.opening}{data.ls_all}]}}"
    else:
        rows = [
            text
            for task_state, task_to, task_context, text in data.ls_rows
            if listed(
                task_state,
                task_to,
                task_context,
                wanted_state=options.get("--state"),
                wanted_to=options.get("--to"),
                wanted_context=options.get("--context"),
            )
        ]
    return f"{data.opening}{', '.join(rows)}]}}"


def _settle(path: str, data: Answers, settled: dict[str, int]) -> None:
    """Store the file again with the new ages of the young identities just checked, so that
    those old enough are trusted by their keys from now on. Racing a writer is safe: a file
    stored over a newer one has keys that no longer hold, and is rebuilt."""
    margin = racy_margin()
    if all(age <= margin for age in settled.values()):
        return  # nothing is old enough yet: storing would change nothing
    if SETTINGS in settled:
        data.settings = (data.settings[0], settled.pop(SETTINGS), data.settings[2])
    if FOLDER in settled:
        data.folder = (data.folder[0], settled.pop(FOLDER))
    young = dict(data.young)
    for task_id, age in settled.items():
        if age > margin:
            del young[task_id]
            data.trusted = min(data.trusted, age)
    data.young = young
    dump(path, data.fields())
