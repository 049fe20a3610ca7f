"""GitPython, opened once by the long history readers (`audit`, `review`, `sync`).

Importing GitPython costs about 180 ms, so nothing on a fast path (`ls`, `ready`, `show`,
`claim`, `new`, `move`, ...) imports this module: `taskfs.store.git` does not, and
`tests/test_startup.py` checks it. A command that reads history pays it once and gets
GitPython's command layer and its persistent `git cat-file --batch`, through which every blob
and tree of the command is read.

GitPython's object model (`Commit`, `Tree`, `Diff`) takes only 20-byte SHA-1 ids, and taskfs
reads SHA-256 repositories too: commits and changes come from the one log parser
(`taskfs.store.git.history`), trees from `reader.parse_tree`, which take either.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import git as gitpython
from git.exc import GitCommandError

from taskfs.errors import fail
from taskfs.store.git.process import Process, argv, dropped_var, scrubbed_env
from taskfs.store.git.reader import parse_tree

# GitPython logs a warning where git wrote to stderr; taskfs says what went wrong itself.
logging.getLogger("git").addHandler(logging.NullHandler())


class _Command(gitpython.cmd.Git):
    """GitPython's command runner in taskfs's scrubbed environment, with the settings that run
    commands pinned (`process.argv`). GitPython starts from `os.environ` and can only add to it,
    so the variables a git hook sets (`GIT_DIR`, `GIT_INDEX_FILE`, ...), which would point git
    elsewhere, are unset by `env` before git."""

    def execute(self, command: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(command, str) and command and command[0] == "git":
            command = argv(*command[1:])
        drop = sorted(name for name in os.environ if dropped_var(name, os.environ))
        if drop and not isinstance(command, str):
            command = ["env", *(f"--unset={name}" for name in drop), *command]
        return super().execute(command, *args, **kwargs)


class _Repo(gitpython.Repo):
    GitCommandWrapperType = _Command


class Session:
    """One GitPython repository for the reads of one command; `close()` stops its git
    processes (`open_session` does)."""

    def __init__(self, git: Process) -> None:
        self._repo = _Repo(str(git.root))
        extra = scrubbed_env()
        self._repo.git.update_environment(
            **{k: extra[k] for k in ("LC_ALL", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS")}
        )
        self._digest_size = len(git.zero) // 2

    # -- objects, through GitPython's persistent `git cat-file --batch` ------------------

    def read(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of the object `name` (any revision syntax, `COMMIT:PATH` too),
        None when there is none."""
        try:
            _oid, kind, _size, data = self._repo.git.get_object_data(name)
        except ValueError:  # GitPython's word for `missing` or `ambiguous`
            return None
        # GitPython hands the type back as the bytes git wrote.
        return kind.decode() if isinstance(kind, bytes) else str(kind), data

    def tree(self, oid: str) -> Iterator[tuple[str, tuple[str, str]]]:
        found = self.read(oid)
        if found is not None and found[0] == "tree":
            yield from parse_tree(found[1], self._digest_size)

    def tree_at(self, revision_path: str) -> list[tuple[str, tuple[str, str]]]:
        """The entries of the tree `revision_path` names (e.g. `HEAD:tasks`); [] if none."""
        return list(self.tree(revision_path))

    def read_blobs(self, wanted: Sequence[tuple[str, str]]) -> list[bytes | None]:
        """The bytes of each (commit, path) as that commit holds it (None when it holds none)."""
        out: list[bytes | None] = []
        for commit, path in wanted:
            found = self.read(f"{commit}:{path}")
            out.append(found[1] if found and found[0] == "blob" else None)
        return out

    # -- commits and diffs -----------------------------------------------------------------

    def commits_in(self, revisions: str) -> list[str]:
        """The commits of a range (`A..B`, `A...B`), oldest first; `git_failed` when git
        does not know it."""
        with _failing("rev-list"):
            out = self._repo.git.rev_list("--reverse", "--end-of-options", revisions, "--")
        return str(out).split()

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        with _failing("merge-base"):
            return self._repo.is_ancestor(ancestor, commit)  # type: ignore[arg-type]

    def changed_paths(self, old: str, new: str, folder: str) -> list[str]:
        """Paths under `folder` that differ between two commits (both sides of a rename)."""
        with _failing("diff"):
            out = self._repo.git.diff("--name-only", "-z", "--no-renames", old, new, "--", folder)
        return [path for path in str(out).split("\0") if path]

    def close(self) -> None:
        self._repo.close()


@contextmanager
def _failing(command: str) -> Iterator[None]:
    try:
        yield
    except GitCommandError as exc:
        reason = str(exc.stderr or "").strip().removeprefix("stderr: ").strip("'\n ")
        raise fail("git_failed", command=command, reason=reason or str(exc.status)) from None


@contextmanager
def open_session(git: Process) -> Iterator[Session]:
    """GitPython on the checkout of `git`, for one command's history reads."""
    try:
        session = Session(git)
    except (gitpython.exc.GitError, OSError) as exc:
        raise fail("git_failed", command="git", reason=str(exc)) from None
    try:
        yield session
    finally:
        session.close()
