"""A repository's ledger on disk: where things live, reading them, and the one write path.

Every ledger write goes through `Repository.writing()`: it takes the checkout's lock, finishes
or rolls back whatever a killed writer left behind, and hands out a `Writer` whose `commit`
creates the new files atomically and commits exactly those files in one commit.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import time
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from taskfs.core import layout
from taskfs.core.layout import CONFIG_PATH, ENVELOPE, find_git_dir, find_worktree, relative_folder
from taskfs.errors import TaskfsError, fail, problem
from taskfs.readmodel import cache
from taskfs.readmodel.stamps import NO_FILE, FileKey, file_key, newest, racy_margin, task_ids

if TYPE_CHECKING:
    from taskfs.core.config import Config
    from taskfs.store.git import Git
    from taskfs.store.writer import Writer


class Repository:
    """One git working tree that uses taskfs."""

    def __init__(self, root: Path, tasks_rel: str, config: Config | None = None) -> None:
        self.root = root
        self.tasks_rel = tasks_rel
        self.tasks_dir = root / tasks_rel
        self._config = config
        # The settings file's identity and age when `tasks_rel` was read from it (`open`):
        # what the prepared answers of `ls` and `ready` are checked against.
        self.settings_identity: tuple[FileKey, int, bytes] | None = None

    @classmethod
    def open(cls, start: Path | None = None) -> Repository:
        here = (start or Path.cwd()).resolve()
        root = find_worktree(here)
        if root is None:
            raise fail("not_a_repository", path=str(here))
        stamp = time.time_ns()
        identity = file_key(str(root / CONFIG_PATH))
        tasks_rel, digest = tasks_folder(root, find_git_dir(root), identity)
        repo = cls(root, tasks_rel)
        repo.settings_identity = identity, stamp - newest(identity), digest
        return repo

    @property
    def config(self) -> Config:
        """The validated settings, read when first needed: listings that only need the tasks
        folder never import the settings' model."""
        if self._config is None:
            self._config = load_config(self.root)
        return self._config

    def check_settings(self) -> tuple[int, str]:
        """`checkTimeoutSeconds` and `check.sandbox`, as the validated settings say them: kept
        beside the caches by the digest of the settings' bytes the model validated, so that a
        check reads them without the model (issue 31)."""
        try:
            data = (self.root / CONFIG_PATH).read_bytes()
        except OSError:
            data = b""
        digest = hashlib.sha1(data, usedforsecurity=False).digest()
        git_dir = str(find_git_dir(self.root))
        kept = cache.recall(git_dir, "settings", "check", digest)
        if type(kept) is tuple and len(kept) == 2:
            timeout, sandbox = kept
            if type(timeout) is int and type(sandbox) is str:
                return timeout, sandbox
        config = parse_settings(data if data else None)  # names what is wrong with them
        found = config.check_timeout_seconds, config.check.sandbox
        cache.remember(git_dir, "settings", "check", digest, found)
        return found

    @cached_property
    def git(self) -> Git:
        from taskfs.store.git import Git

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
        return layout.state_dir(self.git_dir)

    # -- reading -----------------------------------------------------------------------

    def task_ids(self) -> list[str]:
        """Every folder under the tasks folder whose name is a task id, sorted."""
        return task_ids(str(self.tasks_dir))

    def has_task(self, task_id: str) -> bool:
        return layout.is_task_id(task_id) and (self.task_dir(task_id) / ENVELOPE).is_file()

    def read_bytes(self, rel: str) -> bytes:
        """A ledger file's bytes (OSError when it cannot be read)."""
        return (self.root / rel).read_bytes()

    def entries(self, task_id: str, kind: str) -> list[str]:
        """Every name in a task's folder `kind` (YAML or not), sorted; a writer's temporary
        file (a leading dot) left out."""
        try:
            names = os.listdir(self.task_dir(task_id) / kind)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(n for n in names if not n.startswith("."))

    def list_dir(self, task_id: str, kind: str) -> list[str]:
        """The YAML file names in a task's status, evidence, messages or reads folder, sorted."""
        try:
            names = os.listdir(self.task_dir(task_id) / kind)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(n for n in names if n.endswith(".yaml") and not n.startswith("."))

    # -- writing -----------------------------------------------------------------------

    def writing(self) -> contextlib.AbstractContextManager[Writer]:
        """The lock for reading state, deciding and writing, as one step among processes
        (taskfs.store.writer)."""
        from taskfs.store.writer import writing

        return writing(self)


def tasks_folder(root: Path, git_dir: Path, key: FileKey) -> tuple[str, bytes]:
    """Where task folders live (`tasksDir`), read without the settings' model: every command
    needs it. Remembered beside the ledger cache, keyed by the settings file's identity `key`.
    With it, the digest of the settings file's bytes it was read from (empty: no file)."""
    path = root / CONFIG_PATH
    if key == NO_FILE:
        try:
            path.stat()
        except FileNotFoundError:
            return "tasks", b""
        except OSError as exc:
            raise fail("config_invalid", path=CONFIG_PATH, reason=str(exc)) from None
    data: bytes | None = None
    kept = cache.recall(str(git_dir), "settings", "tasks-dir", key)
    if type(kept) is tuple and len(kept) == 2 and isinstance(kept[1], str):
        digest, remembered = kept
        if newest(key) < time.time_ns() - racy_margin():  # not racily the same
            return remembered, digest
        with contextlib.suppress(OSError):
            data = path.read_bytes()
            if hashlib.sha1(data, usedforsecurity=False).digest() == digest:
                return remembered, digest
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
    cache.remember(str(git_dir), "settings", "tasks-dir", key, (digest, value))
    return value, digest


def load_config(root: Path) -> Config:
    path = root / CONFIG_PATH
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return parse_settings(None)
    except OSError as exc:
        raise fail("config_invalid", path=CONFIG_PATH, reason=str(exc)) from None
    return parse_settings(data)


def parse_settings(data: bytes | None) -> Config:
    """The settings the bytes of `.taskfs/config.yaml` hold (None: there is no such file);
    `config_invalid` naming what is wrong."""
    from taskfs.core import yamlio  # YAML only where a file is parsed
    from taskfs.core.config import Config, parse_config

    if data is None:
        return Config()
    try:
        value = yamlio.load(data)
    except yamlio.YamlError as exc:
        raise fail("config_invalid", path=CONFIG_PATH, reason=exc.reason) from None
    config, problems = parse_config(value)
    if config is None:
        raise TaskfsError(problems)
    return config


def read_input(label: str, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of an envelope file named on the command line (or of `stdin` for `-`),
    refusing what cannot be an envelope: past the envelope size limit is `yaml_invalid`
    (contract section 2), whatever cannot be a file `file_unreadable` (`taskfs.store.inputs`)."""
    from taskfs.core import yamlio  # YAML only where a file is parsed
    from taskfs.store import inputs

    try:
        return inputs.read_limited(label, yamlio.MAX_BYTES, stdin=stdin)
    except TaskfsError as exc:
        if exc.codes != ["input_too_large"]:
            raise
        reason = f"it is over the limit of {yamlio.MAX_BYTES:,} bytes (1 MiB)"
        raise fail("yaml_invalid", path=exc.problems[0].data["path"], reason=reason) from None


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
