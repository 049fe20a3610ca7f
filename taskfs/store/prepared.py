"""`ls --json` and `ready --json`, answered ready-made: the hot path of the commands agents
call most.

Whenever the ledger cache (`taskfs.store.index`) is written, both documents are written beside
it (`<git dir>/taskfs/cache/prepared-v2`), with the identities of everything they were derived
from: the settings file, the tasks folder, and each task's `envelope.yaml` and `status/` (the
cache's own keys, `Folder.key`). `answer` finds the checkout, reads that one file and checks the
identities: two `stat` calls per task through an open handle on the tasks folder, nothing
parsed, nothing imported but this module and the filters it shares with the full listings
(`taskfs.core.shown`). When every identity holds it prints the stored document (filtered by
`--state`, `--to`, `--context` or the agent); when anything differs or cannot be read it
answers None, and the caller asks the cache, which catches up and writes this file again.
Deleting it changes no answer.

Racily clean files: a file changed in the same clock tick as the `stat` that keyed it can keep
its key (git's "racily clean" problem, see `taskfs.store.index`). Each key is stored with how
long before its `stat` the file last changed (its age); an identity too young to be trusted is
checked against the bytes it was derived from (`fingerprint`). Once such a task's files are old
enough, `answer` stores the file again with their new age, so the check is paid once, not on
every call.
"""

from __future__ import annotations

import marshal
import os
import time

from taskfs import __version__
from taskfs.core.layout import CONFIG_PATH as CONFIG
from taskfs.core.layout import ENVELOPE, STATUS
from taskfs.core.shapes import listing_head

TYPE_CHECKING = False  # `typing` costs the hot path 3 ms to import; type checkers know this
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

FORMAT = 3
NAME = f"prepared-v{FORMAT}"
RACY_MARGIN_NS = 2_000_000_000  # coarser than any file system's timestamps we know of
SETTINGS, FOLDER = "<settings>", "<folder>"  # not task ids: those are [a-z0-9._-]

# `(envelope: ino size mtime ctime, status/: ino mtime ctime)`; zeros for what is not there.
Key = tuple[int, int, int, int, int, int, int]
NO_KEY: Key = (0, 0, 0, 0, 0, 0, 0)
# A folder's or file's `(ino, size, mtime, ctime)`; zeros when it is not there.
FileKey = tuple[int, int, int, int]
NO_FILE: FileKey = (0, 0, 0, 0)
# What a task's row was derived from: its status file names, and digests of the envelope and
# of the status files (`fingerprint`).
Fingerprint = tuple[tuple[str, ...], bytes, bytes]


def racy_margin() -> int:
    # Settable for file systems with coarser timestamps (and for tests, which need not wait).
    configured = os.environ.get("TASKFS_RACY_MARGIN_MS")
    return int(configured) * 1_000_000 if configured and configured.isdigit() else RACY_MARGIN_NS


# -- identities ------------------------------------------------------------------------------


class Folder:
    """The tasks folder, open for `stat`s relative to it (no path walk per task where the
    platform allows)."""

    def __init__(self, path: str) -> None:
        self.fd: int | None = None
        self.prefix = path + "/"
        if os.stat in os.supports_dir_fd:
            try:
                self.fd = os.open(path, os.O_RDONLY)
                self.prefix = ""
            except OSError:
                pass

    def key(self, task_id: str) -> Key:
        """The identity of a task folder's `envelope.yaml` and `status/`."""
        try:
            env = os.stat(self.prefix + task_id + "/" + ENVELOPE, dir_fd=self.fd)
        except OSError:
            return NO_KEY
        try:
            status = os.stat(self.prefix + task_id + "/" + STATUS, dir_fd=self.fd)
        except OSError:
            return (env.st_ino, env.st_size, env.st_mtime_ns, env.st_ctime_ns, 0, 0, 0)
        return (
            env.st_ino,
            env.st_size,
            env.st_mtime_ns,
            env.st_ctime_ns,
            status.st_ino,
            status.st_mtime_ns,
            status.st_ctime_ns,
        )

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def newest(key: Sequence[int]) -> int:
    """The latest file time in a key (`Key` or `FileKey`): what its age is measured from."""
    return max(key[2], key[3], key[-2], key[-1])


def file_key(path: str) -> FileKey:
    try:
        st = os.stat(path)
    except OSError:
        return NO_FILE
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _same_head(git_dir: str, token: bytes) -> bool:
    """Whether HEAD stands where it stood when the answers with `token` were derived, or was
    found since to have moved without changing any task (`taskfs.store.index`)."""
    with open(f"{git_dir}/taskfs/cache/head", "rb") as handle:
        stored, head = marshal.loads(handle.read())
    return bool(stored == token and head[0] == head_identity(git_dir))


def _moved_elsewhere(root: str, git_dir: str, data: Any) -> bool:
    """Whether HEAD moved without changing the tasks folder (a commit of code): then the
    answers still hold, and `cache/head` says so from now on. One `git diff --quiet`."""
    path = f"{git_dir}/taskfs/cache/head"
    with open(path, "rb") as handle:
        token, (_identity, commit) = marshal.loads(handle.read())
    if token != data[13] or commit is None:
        return False
    from pathlib import Path

    from taskfs.store.git import Git

    git = Git(Path(root))
    identity = head_identity(git_dir)
    now = git.head_guess()
    if now is None:
        return False
    if now != commit:
        proc = git.run_raw("diff", "--quiet", "--no-ext-diff", commit, now, "--", data[0][2])
        if proc.returncode != 0:
            return False
    dump(path, (token, (identity, now)))
    return True


def head_identity(git_dir: str) -> tuple[FileKey, ...]:
    """The identities of the files that say which commit HEAD is: `HEAD`, the branch's loose
    ref and `packed-refs` (in a linked worktree, refs live in the common git dir)."""
    common = git_dir
    try:
        with open(git_dir + "/commondir", encoding="utf-8") as handle:
            common = os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    except OSError:
        pass
    keys = [file_key(git_dir + "/HEAD")]
    try:
        with open(git_dir + "/HEAD", encoding="utf-8") as handle:
            text = handle.read().strip()
    except OSError:
        text = ""
    if text.startswith("ref: "):
        keys += [file_key(common + "/" + text[5:]), file_key(common + "/packed-refs")]
    return tuple(keys)


def _file_digest(path: str) -> bytes:
    import hashlib

    try:
        with open(path, "rb") as handle:
            return hashlib.sha1(handle.read(), usedforsecurity=False).digest()
    except FileNotFoundError:
        return b""


def task_ids(tasks_dir: str) -> list[str]:
    """Every folder in the tasks folder whose name is a task id, sorted."""
    from taskfs.core import layout

    try:
        entries = list(os.scandir(tasks_dir))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(e.name for e in entries if e.is_dir() and layout.is_task_id(e.name))


def status_names(folder: str) -> tuple[str, ...]:
    try:
        names = os.listdir(folder + "/" + STATUS)
    except OSError:
        return ()
    return tuple(sorted(n for n in names if n.endswith(".yaml") and not n.startswith(".")))


def fingerprint(folder: str, names: tuple[str, ...] | None = None) -> Fingerprint:
    """What a task folder holds, to the byte: its status file names, a digest of its envelope
    and a digest of its status files' names and bytes."""
    import hashlib

    names = status_names(folder) if names is None else names
    try:
        envelope = _file_digest(folder + "/" + ENVELOPE)
    except OSError:
        envelope = b""
    status = hashlib.sha1(usedforsecurity=False)
    for name in names:
        status.update(name.encode() + b"\0")
        try:
            with open(f"{folder}/{STATUS}/{name}", "rb") as handle:
                status.update(handle.read())
        except OSError:
            status.update(b"\1unreadable")
        status.update(b"\0")
    return names, envelope, status.digest()


# -- writing ---------------------------------------------------------------------------------


# A task as the prepared answers need it (built by `taskfs.store.index`): its key, how long
# before its `stat` the newest of its files changed (its age), its fingerprint, its row in `ls`
# as (state, to, contextID, JSON text) or None when it is not listed, and whether it is ready:
# False when not, else its recipient (None: anyone may claim it). A plain tuple: thousands are
# built on every write.
Row = tuple[Key, int, Fingerprint, "tuple[str, str | None, str, str] | None", "str | bool | None"]


def write(
    path: str,
    *,
    tasks_rel: str,
    settings: tuple[FileKey, int, bytes],
    folder: tuple[FileKey, int],
    ids: Sequence[str],
    rows: Sequence[Row],
    states: Iterable[str],
    schema_version: int,
    token: bytes = b"",
) -> None:
    """Store both documents and what they were derived from: `rows` are the tasks `ids`, in
    order. `settings` is the settings file's identity, age and digest of its bytes; `folder`
    the tasks folder's identity and age; `token` names them together with the ledger cache's
    rows and with `cache/head`, where HEAD stood when they were derived (whether a file is
    committed can change with HEAD alone)."""
    margin = racy_margin()
    keys = []
    young = {}
    trusted = margin + 1  # the youngest age among the identities trusted by their keys
    listed = []
    listed_ids = []
    ready = []
    for task_id, (key, age, print_, shown, ready_for) in zip(ids, rows, strict=True):
        keys.append(key)
        if age <= margin:
            young[task_id] = (age, print_)
        elif age < trusted:
            trusted = age
        if shown is not None:
            listed.append(shown)
            listed_ids.append(task_id)
            if ready_for is not False:
                ready.append((ready_for, shown[3]))
    dump(
        path,
        (
            (FORMAT, __version__, tasks_rel),
            settings,
            folder,
            tuple(ids),
            tuple(keys),
            trusted,
            young,
            tuple(states),
            listing_head(schema_version),
            ", ".join(row[3] for row in listed),
            listed,
            ", ".join(text for _to, text in ready),
            ready,
            token,
            tuple(listed_ids),
        ),
    )


def dump(path: str, data: Any) -> None:
    """Write `data` (marshalled) to `path` atomically; one that cannot be written is left."""
    tmp = f"{path}.{os.getpid()}.tmp"
    try:  # a cache that cannot be written (a read-only checkout) only costs speed
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(marshal.dumps(data))
        os.replace(tmp, path)
    except OSError:
        _unlink(tmp)


def _unlink(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        return


# -- reading (the hot path: `os`, `marshal`, `time` and `taskfs.core.shown` only) ---------------


def answer(command: str, options: dict[str, str], agent: str | None) -> str | None:
    """`ls --json` (options `--state`, `--to`, `--context`) or `ready --json` (for `agent`),
    as the full path would print it, or None when the stored answer cannot be vouched for."""
    try:
        found = _checkout(os.getcwd())
        if found is None:
            return None
        root, git_dir = found
        path = f"{git_dir}/taskfs/cache/{NAME}"
        with open(path, "rb") as handle:
            data = marshal.loads(handle.read())
        if data[0] != (FORMAT, __version__, data[0][2]):
            return None
        data, delta = _with_delta(path, data)
        if options.get("--state", "submitted") not in data[7]:
            return None  # the full path names the states there are
        if not _same_head(git_dir, data[13]) and not _moved_elsewhere(root, git_dir, data):
            return None  # HEAD moved: which files are committed is for the cache to say again
        settled = _settled(root, data)
        if settled is None:
            return None
        if settled and (delta is None or not _settle_delta(path, delta, settled)):
            _settle(path, data, settled)
        return _document(data, command, options, agent)
    except Exception:  # a file that cannot be read is rebuilt, never trusted
        return None


def _with_delta(path: str, data: Any) -> tuple[Any, Any]:
    """The answers with a writer's delta applied (`taskfs.store.index._remember_delta`): the
    new identities and rows of the few tasks it changed, and the whole `ready` answer. A
    delta written for other answers (another token) is ignored."""
    try:
        with open(path + ".delta", "rb") as handle:
            token, changed, ready = marshal.loads(handle.read())
    except FileNotFoundError:
        return data, None
    if token != data[13]:
        return data, None
    parts = list(data)
    margin = racy_margin()
    ids, keys, young = parts[3], list(parts[4]), dict(parts[6])
    where = {task_id: i for i, task_id in enumerate(ids)}
    listed_at = {task_id: i for i, task_id in enumerate(parts[14])}
    listed = list(parts[10])
    for task_id, (key, age, print_, shown) in changed.items():
        keys[where[task_id]] = key
        young.pop(task_id, None)
        if age <= margin:
            young[task_id] = (age, print_)
        else:
            parts[5] = min(parts[5], age)
        if (task_id in listed_at) != (shown is not None):
            raise ValueError(task_id)  # its place in the listing changed: not a delta's to say
        if shown is not None:
            listed[listed_at[task_id]] = shown
    parts[4], parts[6], parts[10] = tuple(keys), young, listed
    parts[9] = ", ".join(row[3] for row in listed)
    parts[11] = ", ".join(text for _to, text in ready)
    parts[12] = ready
    return tuple(parts), (token, changed, ready)


def _settle_delta(path: str, delta: Any, settled: dict[str, int]) -> bool:
    """`_settle` for tasks a writer's delta names: their new ages go in the delta, so that
    the first listings after a write never store the whole answers again. False when an
    identity outside the delta settled (the whole file is stored then)."""
    token, changed, ready = delta
    if not set(settled) <= set(changed):
        return False
    margin = racy_margin()
    if all(age <= margin for age in settled.values()):
        return True  # nothing is old enough yet
    with open(path + ".delta", "rb") as handle:
        if marshal.loads(handle.read()) != delta:
            return True  # a writer stored a newer delta meanwhile: leave it whole
    changed = dict(changed)
    for task_id, age in settled.items():
        key, _age, print_, shown = changed[task_id]
        changed[task_id] = (key, age, print_, shown)
    dump(path + ".delta", (token, changed, ready))
    return True


def _settled(root: str, data: Any) -> dict[str, int] | None:
    """None when an identity the answers were derived from has changed. Otherwise the young
    identities (see the module docstring) just checked against bytes, with their ages now:
    the settings file's and the tasks folder's under SETTINGS and FOLDER (which no task id
    can be), the tasks' under their ids."""
    (_header, settings, folder, ids, keys, youngest_trusted, young) = data[:7]
    margin = racy_margin()
    stamp = time.time_ns()
    settings_key = file_key(f"{root}/{CONFIG}")
    if settings_key != settings[0]:
        return None  # the settings (where the tasks folder is) may have changed
    settled: dict[str, int] = {}
    if settings[1] <= margin:
        if _file_digest(f"{root}/{CONFIG}") != settings[2]:
            return None
        settled[SETTINGS] = stamp - newest(settings_key)
    tasks_dir = f"{root}/{data[0][2]}"
    folder_key = file_key(tasks_dir)
    if folder_key != folder[0] or youngest_trusted <= margin:
        return None

    if folder[1] <= margin:
        if task_ids(tasks_dir) != list(ids):
            return None
        settled[FOLDER] = stamp - newest(folder_key)
    opened = Folder(tasks_dir)
    try:
        for task_id, key in zip(ids, keys, strict=True):
            if opened.key(task_id) != key:
                return None
    finally:
        opened.close()
    checked = {t: entry for t, entry in young.items() if entry[0] <= margin}
    if checked:
        key_of = dict(zip(ids, keys, strict=True))
        for task_id, (_age, print_) in checked.items():
            if fingerprint(f"{tasks_dir}/{task_id}") != print_:
                return None
            settled[task_id] = stamp - newest(key_of[task_id])
    return settled


def _document(data: Any, command: str, options: dict[str, str], agent: str | None) -> str:
    head, ls_all, ls_rows, ready_all, ready_rows = data[8:13]
    from taskfs.core.shown import listed, offered_to

    if command == "ready":
        if agent is None:
            return f"{head}{ready_all}]}}"
        rows = [text for to, text in ready_rows if offered_to(to, agent)]
    elif not options:
        return f"{head}{ls_all}]}}"
    else:
        rows = [
            text
            for task_state, task_to, task_context, text in ls_rows
            if listed(
                task_state,
                task_to,
                task_context,
                wanted_state=options.get("--state"),
                wanted_to=options.get("--to"),
                wanted_context=options.get("--context"),
            )
        ]
    return f"{head}{', '.join(rows)}]}}"


def _settle(path: str, data: Any, settled: dict[str, int]) -> None:
    """Store the file again with the new ages of the young identities just checked, so that
    those old enough are trusted by their keys from now on. Racing a writer is safe: a file
    stored over a newer one has keys that no longer hold, and is rebuilt."""
    margin = racy_margin()
    if all(age <= margin for age in settled.values()):
        return  # nothing is old enough yet: storing would change nothing
    parts = list(data)
    if SETTINGS in settled:
        parts[1] = (parts[1][0], settled.pop(SETTINGS), parts[1][2])
    if FOLDER in settled:
        parts[2] = (parts[2][0], settled.pop(FOLDER))
    young = dict(parts[6])
    for task_id, age in settled.items():
        if age > margin:
            del young[task_id]
            parts[5] = min(parts[5], age)
    parts[6] = young
    dump(path, tuple(parts))


def _checkout(start: str) -> tuple[str, str] | None:
    """The working tree holding `start` and its git dir, as `taskfs.core.layout` finds them."""
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
