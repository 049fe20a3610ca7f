"""The one write path of the ledger: the checkout's lock, a change's files, their commit.

`Repository.writing()` takes the checkout's lock, finishes or rolls back whatever a killed
writer left behind (`recover`), and hands out a `Writer` whose `commit` creates the new files
atomically and commits exactly those files in one commit. A journal written before the files
lets the next writer finish or undo a change whose process was killed midway.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from taskfs import i18n
from taskfs.core import layout, progress
from taskfs.core.layout import ENVELOPE
from taskfs.errors import TaskfsError, fail
from taskfs.store import fs
from taskfs.store.git.objects import Identity

if TYPE_CHECKING:
    from taskfs.readmodel.projection import Summary
    from taskfs.store.repository import Repository


@contextlib.contextmanager
def writing(repo: Repository) -> Iterator[Writer]:
    with _locked(repo):
        recover(repo)
        yield Writer(repo)


@contextlib.contextmanager
def _locked(repo: Repository) -> Iterator[None]:
    """The checkout's lock, or `git_dir_read_only` when its git dir cannot be written (a
    read-only mount, a repository the user may only read): every question is answered without
    the lock, but no change can be made."""
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(fs.repo_lock(repo.state_dir() / "lock"))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise fail("git_dir_read_only", path=str(repo.git_dir), reason=reason) from None
        yield


class Writer:
    """The files one ledger change adds, and the commit that holds exactly them."""

    def __init__(self, repo: Repository) -> None:
        self._repo = repo
        self._files: dict[str, bytes] = {}
        self._included: list[str] = []
        self._removed: list[str] = []
        self._retired: list[str] = []
        self._rows: dict[str, Summary] = {}

    def project(self, summary: Summary) -> None:
        """The read model's row of a task this change writes to, as the change leaves it (a
        transition's task, a new task): stored in the commit step instead of read back."""
        self._rows[summary.id] = summary

    def add(self, rel: str, data: bytes) -> None:
        """A new ledger file; the commit refuses to overwrite one that exists."""
        self._known(rel)
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

    def retire(self, rel: str) -> None:
        """A task folder the change takes out of the tree whole (`taskfs archive`): the commit
        records the removal of every file in it, and it leaves the working tree after the
        commit. History keeps its files."""
        self._retired.append(rel)

    def commit_existing(self, paths: Sequence[str], message: str, agent: str) -> str:
        """Commit files already written in place (settings, schemas, keys, a task's work)."""
        for rel in paths:
            self._known(rel)
        return self._repo.git.commit_files(list(paths), message, Identity.agent(agent))

    def _known(self, rel: str) -> None:
        """Every file taskfs commits in the ledger's folders is of a kind the authority table
        (`taskfs.core.ledger_kinds`) has a rule for: a new kind of file needs its row first."""
        from taskfs.core.ledger_kinds import is_ledger_path, kind_of

        tasks_rel = self._repo.tasks_rel
        if is_ledger_path(rel, tasks_rel) and kind_of(rel, tasks_rel) is None:
            raise ValueError(f"{rel} is no kind of ledger file: give it a row in ledger_kinds")

    def commit(self, message: str, agent: str, *, when: datetime | None = None) -> str:
        """Create the change's files and commit exactly them."""
        repo = self._repo
        # One change per commit: whatever happens below, the writer starts empty again.
        files, included, removed = dict(self._files), list(self._included), list(self._removed)
        retired, rows = list(self._retired), dict(self._rows)
        self._files.clear()
        self._included.clear()
        self._removed.clear()
        self._retired.clear()
        self._rows.clear()
        # Flushed to disk first when git flushes the objects they become (`core.fsync`): an
        # `fsync` waits for every file written before it, the caches and git's index included.
        durable = repo.git.hardens_loose_objects
        journal = write_journal(
            repo,
            sorted(files),
            message,
            agent,
            included=included,
            removed=removed,
            retired=retired,
            durable=durable,
        )
        created: list[Path] = []

        def place() -> None:
            # A new task's folder appears whole (one rename); files added to a folder that is
            # there appear one by one, each whole.
            for folder, held in _by_new_folder(repo, files).items():
                if folder is None:
                    for rel, data in held.items():
                        fs.create_new(repo.root / rel, data, durable=durable)
                        created.append(repo.root / rel)
                    continue
                inside = {rel[len(folder) + 1 :]: data for rel, data in held.items()}
                fs.create_folder(repo.root / folder, inside, durable=durable)
                created.extend(repo.root / rel for rel in held)

        try:
            commit = repo.git.commit_files(
                [*files, *included],
                message,
                Identity.agent(agent),
                when=when,
                removed=removed,
                retired=retired,
                contents=files,
                place=place,
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
        _take_out(repo, retired)
        journal.unlink(missing_ok=True)
        # The read model's rows of the tasks it changed, with the commit as its HEAD.
        from taskfs.store import readmodel_store

        changed = [*files, *included, *removed, *(f"{rel}/{ENVELOPE}" for rel in retired)]
        readmodel_store.committed(repo, changed, rows, written=files)
        return commit


def _by_new_folder(repo: Repository, files: dict[str, bytes]) -> dict[str | None, dict[str, bytes]]:
    """`files` by the task folder they make (one that is not there yet), or under None."""
    prefix = repo.tasks_rel + "/"
    grouped: dict[str | None, dict[str, bytes]] = {}
    fresh: dict[str, bool] = {}
    for rel, data in files.items():
        folder: str | None = None
        if rel.startswith(prefix) and "/" in rel[len(prefix) :]:
            folder = prefix + rel[len(prefix) :].split("/", 1)[0]
            if folder not in fresh:
                fresh[folder] = not os.path.lexists(repo.root / folder)
            folder = folder if fresh[folder] else None
        grouped.setdefault(folder, {})[rel] = data
    return grouped


def _take_out(repo: Repository, folders: Sequence[str]) -> None:
    """Remove the folders a commit took out of the tree from the working tree too."""

    def label() -> str:
        return i18n.say("removing {count} task folders", count=len(folders))

    with progress.step(label, len(folders)) as advance:
        for rel in folders:
            shutil.rmtree(repo.root / rel, ignore_errors=True)
            advance(1)


def write_journal(
    repo: Repository,
    paths: Sequence[str],
    message: str,
    agent: str,
    *,
    included: Sequence[str] = (),
    removed: Sequence[str] = (),
    retired: Sequence[str] = (),
    durable: bool = True,
) -> Path:
    """Record what is about to be written, so a writer killed midway can be finished or undone."""
    entry = {
        "paths": list(paths),
        "included": list(included),
        "removed": list(removed),
        "retired": list(retired),
        "message": message,
        "agent": agent,
    }
    name = f"{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%S%f')}-{layout.nonce(8)}.json"
    target = repo.state_dir() / "journal" / name
    fs.replace(target, json.dumps(entry).encode(), durable=durable)
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
            retired = [str(p) for p in entry.get("retired", [])]
            message, agent = str(entry["message"]), str(entry["agent"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            path.unlink(missing_ok=True)
            continue
        with repo.git.reader() as reader:
            pending = [p for p in paths if not reader.exists(f"HEAD:{p}")]
        present = [p for p in pending if (repo.root / p).is_file()]
        if pending and len(present) == len(pending):
            kept = [p for p in included if (repo.root / p).is_file()]
            repo.git.commit_files(
                present + kept, message, Identity.agent(agent), removed=removed, retired=retired
            )
            _take_out(repo, retired)
        else:
            for rel in present:
                (repo.root / rel).unlink(missing_ok=True)
        # Under the lock no one else is writing: a temporary file beside one of these paths,
        # a temporary folder beside its task's (a new task's, `fs.create_folder`), or a
        # folder made for one of them and left empty, is what a killed writer left.
        for rel in paths:
            for leftover in _leftovers(repo, rel):
                if leftover.is_dir() and not leftover.is_symlink():
                    shutil.rmtree(leftover, ignore_errors=True)
                else:
                    leftover.unlink(missing_ok=True)
        for rel in _deepest_first(pending):
            fs.prune((repo.root / rel).parent, up_to=repo.tasks_dir)
        path.unlink(missing_ok=True)


def _leftovers(repo: Repository, rel: str) -> list[Path]:
    """The temporary files beside `rel`, and the temporary folders beside each folder above
    it, below the tasks folder."""
    target = repo.root / rel
    found = fs.temporaries(target)
    while True:
        target = target.parent
        if target == repo.tasks_dir or repo.tasks_dir not in target.parents:
            return found
        found += fs.folder_temporaries(target)


def _deepest_first(paths: Iterable[str]) -> list[str]:
    return sorted(paths, key=lambda rel: rel.count("/"), reverse=True)
