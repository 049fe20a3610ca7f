"""A repository's ledger on disk: where things live, reading them, and the one write path.

Every ledger write goes through `Repository.writing()`: it takes the checkout's lock, finishes
or rolls back whatever a killed writer left behind, and hands out a `Writer` whose `commit`
creates the new files atomically and commits exactly those files in one commit.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import marshal
import os
import stat
import time
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskfs.core import ids
from taskfs.core.paths import relative_folder
from taskfs.errors import TaskfsError, fail, problem
from taskfs.store import fs
from taskfs.store.git import Git, Identity, find_git_dir, find_worktree

if TYPE_CHECKING:
    from taskfs.core.config import Config

CONFIG_PATH = ".taskfs/config.yaml"
ENVELOPE = "envelope.yaml"
STATUS = "status"
EVIDENCE = "evidence"
MESSAGES = "messages"
READS = "reads"


class Repository:
    """One git working tree that uses taskfs."""

    def __init__(self, root: Path, tasks_rel: str, config: Config | None = None) -> None:
        self.root = root
        self.tasks_rel = tasks_rel
        self.tasks_dir = root / tasks_rel
        self._config = config

    @classmethod
    def open(cls, start: Path | None = None) -> Repository:
        here = (start or Path.cwd()).resolve()
        root = find_worktree(here)
        if root is None:
            raise fail("not_a_repository", path=str(here))
        return cls(root, tasks_folder(root, find_git_dir(root)))

    @property
    def config(self) -> Config:
        """The validated settings, read when first needed: listings that only need the tasks
        folder never import the settings' model."""
        if self._config is None:
            self._config = load_config(self.root)
        return self._config

    @cached_property
    def git(self) -> Git:
        return Git(self.root)

    @cached_property
    def git_dir(self) -> Path:
        return find_git_dir(self.root)

    # -- where things live -------------------------------------------------------------

    def task_dir(self, task_id: str) -> Path:
        return self.tasks_dir / task_id

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def task_rel(self, task_id: str, *parts: str) -> str:
        return "/".join((self.tasks_rel, task_id, *parts))

    def state_dir(self) -> Path:
        """Per-checkout private state (lock, journal, caches), never committed."""
        return self.git_dir / "taskfs"

    # -- reading -----------------------------------------------------------------------

    def task_ids(self) -> list[str]:
        """Every folder under the tasks folder whose name is a task id, sorted."""
        try:
            entries = list(os.scandir(self.tasks_dir))
        except FileNotFoundError:
            return []
        return sorted(e.name for e in entries if e.is_dir() and ids.is_task_id(e.name))

    def has_task(self, task_id: str) -> bool:
        return ids.is_task_id(task_id) and (self.task_dir(task_id) / ENVELOPE).is_file()

    def read_bytes(self, rel: str) -> bytes:
        """A ledger file's bytes (OSError when it cannot be read)."""
        return (self.root / rel).read_bytes()

    def list_dir(self, task_id: str, kind: str) -> list[str]:
        """The YAML file names in a task's status, evidence, messages or reads folder, sorted."""
        try:
            names = os.listdir(self.task_dir(task_id) / kind)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(n for n in names if n.endswith(".yaml") and not n.startswith("."))

    # -- writing -----------------------------------------------------------------------

    @contextlib.contextmanager
    def writing(self) -> Iterator[Writer]:
        """The lock for reading state, deciding and writing, as one step among processes."""
        state = self.state_dir()
        with fs.repo_lock(state / "lock"):
            recover(self)
            yield Writer(self)


class Writer:
    """The files one ledger change adds, and the commit that holds exactly them."""

    def __init__(self, repo: Repository) -> None:
        self._repo = repo
        self._files: dict[str, bytes] = {}
        self._included: list[str] = []
        self._removed: list[str] = []

    def add(self, rel: str, data: bytes) -> None:
        """A new ledger file; the commit refuses to overwrite one that exists."""
        if rel in self._files:
            raise ValueError(f"{rel} added twice")
        self._files[rel] = data

    def include(self, rel: str) -> None:
        """A file already in the working tree that the commit takes as it is (an envelope
        dropped at its task's place). It is never deleted, not even when the change is undone."""
        self._included.append(rel)

    def remove(self, rel: str) -> None:
        """A file the change consumes (an envelope dropped into the tasks folder): the commit
        records its removal when git tracks it, and it leaves the working tree after the commit."""
        self._removed.append(rel)

    def commit_existing(self, paths: Sequence[str], message: str, agent: str) -> str:
        """Commit files already written in place (settings, schemas): not ledger entries."""
        return self._repo.git.commit_files(list(paths), message, Identity.agent(agent))

    def commit(self, message: str, agent: str, *, when: datetime | None = None) -> str:
        repo = self._repo
        # One change per commit: whatever happens below, the writer starts empty again.
        files, included, removed = dict(self._files), list(self._included), list(self._removed)
        self._files.clear()
        self._included.clear()
        self._removed.clear()
        journal = write_journal(
            repo, sorted(files), message, agent, included=included, removed=removed
        )
        created: list[Path] = []
        try:
            for rel, data in files.items():
                fs.create_new(repo.root / rel, data)
                created.append(repo.root / rel)
            commit = repo.git.commit_files(
                [*files, *included], message, Identity.agent(agent), when=when, removed=removed
            )
        except (OSError, TaskfsError) as exc:
            # Nothing was committed: undo the files so the change is none rather than half.
            # (An interrupt lands here not at all: the journal lets the next writer decide.)
            for target in created:
                target.unlink(missing_ok=True)
            for rel in _deepest_first(files):
                fs.prune((repo.root / rel).parent, up_to=repo.tasks_dir)
            journal.unlink(missing_ok=True)
            if isinstance(exc, FileExistsError):
                raise fail("file_invalid", path=exc.filename, reason="it already exists") from None
            if isinstance(exc, OSError):
                raise fail("file_unreadable", path=exc.filename, reason=exc.strerror) from None
            raise
        for rel in removed:
            (repo.root / rel).unlink(missing_ok=True)
        journal.unlink(missing_ok=True)
        return commit


def write_journal(
    repo: Repository,
    paths: Sequence[str],
    message: str,
    agent: str,
    *,
    included: Sequence[str] = (),
    removed: Sequence[str] = (),
) -> Path:
    """Record what is about to be written, so a writer killed midway can be finished or undone."""
    entry = {
        "paths": list(paths),
        "included": list(included),
        "removed": list(removed),
        "message": message,
        "agent": agent,
    }
    name = f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S%f')}-{ids.nonce(8)}.json"
    target = repo.state_dir() / "journal" / name
    fs.replace(target, json.dumps(entry).encode())
    return target


def recover(repo: Repository) -> None:
    """Finish or undo the writes of a writer that died. Runs under the lock.

    All of a change's files present: the writer died between writing and committing, so
    commit them now (nothing is lost). Only some present: it died while writing, so remove
    them (a change is all or none). Files already committed are left alone, and so are the
    files a change included or consumed: they were the user's before the change began (a
    consumed file still present is the watcher's to clear, once it sees it was taken in).
    """
    folder = repo.state_dir() / "journal"
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        return
    for name in names:
        path = folder / name
        try:
            entry: dict[str, Any] = json.loads(path.read_bytes())
            paths = [str(p) for p in entry["paths"]]
            included = [str(p) for p in entry.get("included", [])]
            removed = [str(p) for p in entry.get("removed", [])]
            message, agent = str(entry["message"]), str(entry["agent"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            path.unlink(missing_ok=True)
            continue
        with repo.git.reader() as reader:
            pending = [p for p in paths if not reader.exists(f"HEAD:{p}")]
        present = [p for p in pending if (repo.root / p).is_file()]
        if pending and len(present) == len(pending):
            kept = [p for p in included if (repo.root / p).is_file()]
            repo.git.commit_files(present + kept, message, Identity.agent(agent), removed=removed)
        else:
            for rel in present:
                (repo.root / rel).unlink(missing_ok=True)
        # Under the lock no one else is writing: a temporary file beside one of these paths,
        # or a folder made for one of them and left empty, is what a killed writer left.
        for rel in paths:
            for leftover in fs.temporaries(repo.root / rel):
                leftover.unlink(missing_ok=True)
        for rel in _deepest_first(pending):
            fs.prune((repo.root / rel).parent, up_to=repo.tasks_dir)
        path.unlink(missing_ok=True)


def _deepest_first(paths: Iterable[str]) -> list[str]:
    return sorted(paths, key=lambda rel: rel.count("/"), reverse=True)


def tasks_folder(root: Path, git_dir: Path) -> str:
    """Where task folders live (`tasksDir`), read without the settings' model: every command
    needs it. Remembered beside the ledger cache, keyed by the settings file's identity."""
    path = root / CONFIG_PATH
    try:
        st = path.stat()
    except FileNotFoundError:
        return "tasks"
    except OSError as exc:
        raise fail("config_invalid", path=CONFIG_PATH, reason=str(exc)) from None
    key = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    memo = git_dir / "taskfs" / "cache" / "tasks-dir"
    data: bytes | None = None
    with contextlib.suppress(Exception):
        cached_key, digest, remembered = marshal.loads(memo.read_bytes())
        if cached_key == key and isinstance(remembered, str):
            if max(key[2:]) < time.time_ns() - 2_000_000_000:  # not racily the same
                return remembered
            data = path.read_bytes()
            if hashlib.sha1(data, usedforsecurity=False).digest() == digest:
                return remembered
    from taskfs.core import yamlio  # YAML only when the settings must be parsed

    value: str | None = None
    try:
        data = path.read_bytes() if data is None else data
        parsed = yamlio.load(data)
        raw = parsed.get("tasksDir", "tasks") if isinstance(parsed, dict) else None
        value = relative_folder(raw) if isinstance(raw, str) else None
    except (OSError, yamlio.YamlError, ValueError):
        pass
    if value is None or data is None:
        load_config(root)  # names the problem
        raise fail("config_invalid", path=CONFIG_PATH, reason="tasksDir is not a folder")
    digest = hashlib.sha1(data, usedforsecurity=False).digest()
    with contextlib.suppress(OSError):
        fs.replace(memo, marshal.dumps((key, digest, value)))
    return value


def load_config(root: Path) -> Config:
    from taskfs.core import yamlio  # YAML only where a file is parsed
    from taskfs.core.config import Config, parse_config

    path = root / CONFIG_PATH
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise fail("config_invalid", path=CONFIG_PATH, reason=str(exc)) from None
    try:
        value = yamlio.load(data)
    except yamlio.YamlError as exc:
        raise fail("config_invalid", path=CONFIG_PATH, reason=exc.reason) from None
    config, problems = parse_config(value)
    if config is None:
        raise TaskfsError(problems)
    return config


def read_input(label: str) -> bytes:
    """The bytes of a file named on the command line, refusing what cannot be an envelope."""
    from taskfs.core import yamlio  # YAML only where a file is parsed

    path = Path(label)
    try:
        if path.is_dir():
            raise fail("file_unreadable", path=label, reason="it is a directory")
        size = path.stat().st_size
        if size > yamlio.MAX_BYTES:
            raise TaskfsError(
                problem(
                    "yaml_invalid",
                    path=label,
                    reason=f"the file is {size} bytes; the limit is {yamlio.MAX_BYTES}",
                )
            )
        with path.open("rb") as handle:
            return handle.read(yamlio.MAX_BYTES + 1)
    except OSError as exc:
        raise fail("file_unreadable", path=label, reason=exc.strerror or str(exc)) from None


def read_dropped(root: Path, rel: str) -> bytes | None:
    """The bytes of a file dropped into the tasks folder; None when it is gone. Only a regular
    file is read (never through a link, which could copy any file the watcher can read into a
    refusal report), and only up to one byte past the envelope size limit."""
    from taskfs.core import yamlio  # YAML only where a file is parsed

    try:
        fd = os.open(root / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        reason = "it is a symbolic link" if exc.errno == errno.ELOOP else exc.strerror
        raise fail("file_unreadable", path=rel, reason=reason or str(exc)) from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise fail("file_unreadable", path=rel, reason="it is not a regular file")
        if info.st_size > yamlio.MAX_BYTES:
            raise TaskfsError(
                problem(
                    "yaml_invalid",
                    path=rel,
                    reason=f"the file is {info.st_size} bytes; the limit is {yamlio.MAX_BYTES}",
                )
            )
        return handle.read(yamlio.MAX_BYTES + 1)
