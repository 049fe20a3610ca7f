"""History: what commits did, read with `git log` through ONE parser (`Log.entries`).

Every question about history (which commit added a file, who authored it, what a range or an
unpublished branch added, which ledger files were edited after their commit) is one `git log`
run with `--raw -z` and one header format, parsed by `_parse`. Readers that pay for GitPython
once per long command (`taskfs.store.git.session`) ask the same parser for the logs and use
GitPython for the rest.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple

from taskfs.store.git.process import Process, git_error, nul_list

# The header of each commit in a log: a mark no path or message holds, then NUL-separated fields.
_MARK = "\x01"
_FIELDS = {"commit": "%H", "author": "%an", "email": "%ae", "committed": "%ct", "message": "%B"}


class Author(NamedTuple):
    """The commit that made a change, and who it names as its author."""

    commit: str
    name: str
    email: str


class Change(NamedTuple):
    """One file a commit changed: its status letter (A, M, D; a merge's first), the path, and
    the blob it has after the change (all zeros when deleted)."""

    status: str
    path: str
    blob: str


class LogEntry(NamedTuple):
    commit: str
    author: str = ""
    email: str = ""
    committed: int = 0  # the commit time, in seconds since the epoch
    message: str = ""
    changes: tuple[Change, ...] = ()

    @property
    def by(self) -> Author:
        return Author(self.commit, self.author, self.email)


def log_args(*options: str, message: bool = False) -> list[str]:
    """The arguments of a `git log` whose output `parse_log` reads (`options` add the
    selection: revisions, `--diff-filter`, `--cc`, ...)."""
    names = [*(n for n in _FIELDS if n != "message"), *(["message"] if message else [])]
    fmt = _MARK + "%x00".join(_FIELDS[n] for n in names)
    return ["log", "-z", "--raw", "--no-abbrev", "--no-renames", f"--format={fmt}", *options]


def parse_log(data: bytes, *, message: bool = False) -> list[LogEntry]:
    """The entries of a `git log` run with `log_args` (the one parser of git's logs)."""
    tokens = data.decode("utf-8", "surrogateescape").split("\0")
    width = len(_FIELDS) if message else len(_FIELDS) - 1
    out: list[LogEntry] = []
    head: list[str] | None = None
    changes: list[Change] = []
    i = 0
    while i < len(tokens):
        token = tokens[i].lstrip("\n")
        if token.startswith(_MARK):
            if head is not None:
                out.append(_entry(head, changes))
            head = [token[1:], *tokens[i + 1 : i + width]]
            changes = []
            i += width
        elif token.startswith(":") and i + 1 < len(tokens):
            # `:mode mode oid oid S` (a merge under --cc: `::` and one mode and oid per side).
            meta = token.split()
            changes.append(Change(meta[-1][:1], tokens[i + 1], meta[-2]))
            i += 2
        else:
            i += 1
    if head is not None:
        out.append(_entry(head, changes))
    return out


def _entry(head: list[str], changes: list[Change]) -> LogEntry:
    commit, author, email, committed, message = head + [""] * (len(_FIELDS) - len(head))
    seconds = int(committed) if committed.isdigit() else 0
    return LogEntry(commit, author, email, seconds, message.strip(), tuple(changes))


class History(Process):
    """Questions about what commits did."""

    def log(
        self, *options: str, message: bool = False, env: Mapping[str, str] | None = None
    ) -> list[LogEntry]:
        """`git log` with `options` (revisions, filters, `--`, paths), parsed."""
        out = self.run_checked(*log_args(*options, message=message), env=env)
        return parse_log(out, message=message)

    def _changes(self, *options: str) -> Iterator[tuple[LogEntry, Change]]:
        for entry in self.log(*options):
            for change in entry.changes:
                yield entry, change

    def changes_after_creation(self, *folders: str) -> list[tuple[Author, str, str]]:
        """(commit and its author, M or D, path) for every commit in HEAD's history that
        modified or deleted a file under `folders`; merges are diffed against all their parents
        (`--cc`), so a merge that edits a file on its own is caught too. `--full-history` keeps
        side branches that a merge made invisible (one that took the other side wholesale,
        `-s ours`)."""
        if self.head() is None:
            return []
        found = self._changes("--full-history", "--cc", "--diff-filter=MD", "HEAD", "--", *folders)
        return [(entry.by, change.status, change.path) for entry, change in found]

    def path_history(self, folder: str) -> list[tuple[str, str, str, str]]:
        """(commit, author name, A/M/D, path) for every commit in HEAD's history that added,
        modified or deleted a file under `folder`, newest first (merges diffed with --cc)."""
        if self.head() is None:
            return []
        found = self._changes("--cc", "--diff-filter=AMD", "HEAD", "--", folder)
        return [(e.commit, e.author, change.status, change.path) for e, change in found]

    def file_additions(
        self, folders: Sequence[str], revisions: Sequence[str] = ("HEAD",)
    ) -> dict[str, Author]:
        """The commit that added each file under `folders` in the history of `revisions` (the
        latest one, when a file was added again), with that commit's author. A file a merge
        brought together is credited to the commit on its side branch that added it."""
        if not revisions or self.head() is None:
            return {}
        entries = self.log(
            "--diff-filter=A",
            "--end-of-options",
            *revisions,
            "--",
            *folders,
            env={"GIT_LITERAL_PATHSPECS": "1"},
        )
        found: dict[str, Author] = {}
        for entry in entries:
            for change in entry.changes:
                found.setdefault(change.path, entry.by)
        return found

    def messages(self, grep: str, since: str | None = None) -> list[str]:
        """The messages of the commits in HEAD's history (after `since`) matching `grep`."""
        if self.head() is None:
            return []
        revisions = f"{since}..HEAD" if since else "HEAD"
        entries = self.log("--no-patch", "-E", f"--grep={grep}", revisions, message=True)
        return [e.message for e in entries if e.message]

    def last_commit_time(self, pathspecs: Sequence[str]) -> int | None:
        """When the latest commit in HEAD's history that touched `pathspecs` was made (seconds
        since the epoch); None when none did, or git could not say."""
        if not pathspecs or self.head() is None:
            return None
        args = log_args("-1", "--no-patch", "HEAD", "--", *pathspecs)
        proc = self.run_raw(*args)
        found = parse_log(proc.stdout) if proc.returncode == 0 else []
        return found[0].committed if found and found[0].committed else None

    def commit_times(self, pathspecs: Sequence[str]) -> Iterator[tuple[int, list[str]]]:
        """(commit time, paths it touched) of every commit in HEAD's history that touched
        `pathspecs`, newest first, from one `git log`: a caller matching many owners' files
        reads history once instead of once per owner."""
        if not pathspecs or self.head() is None:
            return
        proc = self.run_raw(*log_args("HEAD", "--", *pathspecs))
        if proc.returncode != 0:
            return
        for entry in parse_log(proc.stdout):
            if entry.committed:
                yield entry.committed, [change.path for change in entry.changes]

    def touching(
        self, revisions: str, pathspecs: Sequence[str], *, limit: int, since: int | None = None
    ) -> list[LogEntry]:
        """The latest `limit` commits of `revisions` that touched `pathspecs` (with their
        messages), newest first; none when git cannot say (a range it does not know). `since`:
        only those committed at or after that time (seconds since the epoch), where git stops
        walking, so that the answer costs the recent history only. (A branch with no commit yet
        is a range git does not know: no `rev-parse` first, one process a question.)"""
        if not pathspecs:
            return []
        args = log_args(
            f"--max-count={limit}",
            *([f"--since=@{since}"] if since is not None else []),
            "--no-patch",
            "--end-of-options",
            revisions,
            "--",
            *pathspecs,
            message=True,
        )
        proc = self.run_raw(*args)
        return parse_log(proc.stdout, message=True) if proc.returncode == 0 else []

    def commits(self, rev_range: str) -> list[tuple[str, str]]:
        """(commit, author name) for every commit of `rev_range` (as `git log` takes it),
        oldest first."""
        entries = self.log("--reverse", "--no-patch", "--end-of-options", rev_range, "--")
        return [(e.commit, e.author) for e in entries]

    def added_files(self, revisions: str, folder: str) -> list[tuple[str, str, str]]:
        """(commit, author, path) of every file under `folder` that a commit of the range
        added, oldest first."""
        found = self._changes(
            "--reverse", "--diff-filter=A", "--end-of-options", revisions, "--", folder
        )
        return [(entry.commit, entry.author, change.path) for entry, change in found]

    def additions(self, glob: str) -> list[tuple[str, str, str]]:
        """(commit, path, blob) for every commit in HEAD's history (side branches included)
        that added a file matching `glob`."""
        if self.head() is None:
            return []
        found = self._changes("--full-history", "--diff-filter=A", "HEAD", "--", f":(glob){glob}")
        return [(entry.commit, change.path, change.blob) for entry, change in found]

    def arrivals(self, revision: str, folder: str) -> list[tuple[str, str]]:
        """(commit, path) of every file under `folder` in the order it arrived on the
        first-parent line of `revision`, oldest first: a file merged in arrives with its merge.
        As the line only grows, a file's place never changes, and a later file never comes
        before an earlier one (the order `taskfs a2a` streams a task's entries in)."""
        found = self._changes(
            "--first-parent",
            "--diff-merges=first-parent",
            "--reverse",
            "--diff-filter=A",
            "--end-of-options",
            revision,
            "--",
            folder,
        )
        return [(entry.commit, change.path) for entry, change in found]

    def unpublished_additions(self, head: str, folder: str) -> list[str]:
        """Paths under `folder` added by commits of `head` that no remote-tracking ref holds."""
        found = self._changes(
            "--full-history", "--diff-filter=A", head, "--not", "--remotes", "--", folder
        )
        return sorted({change.path for _entry, change in found})

    def added_between(self, a: str, b: str, folder: str) -> list[str]:
        """Paths under `folder` added by a commit that one of `a` and `b` holds and the other
        does not (the symmetric difference `a...b`)."""
        found = self._changes("--diff-filter=A", f"{a}...{b}", "--", folder)
        return sorted({change.path for _entry, change in found})

    def unpublished(self, head: str) -> list[str]:
        """The commits of `head` that no remote-tracking ref holds, parents before children."""
        out = self.run("rev-list", "--topo-order", "--reverse", head, "--not", "--remotes")
        return out.split()

    def changed_paths(self, old: str, new: str, folder: str, *more: str) -> list[str]:
        """Paths under `folder` (and the folders `more`) that differ between two commits (both
        sides of a rename), NUL-separated as git prints them, so that no file name can be read
        as two."""
        return nul_list(
            self.run_checked(
                "diff", "--name-only", "-z", "--no-renames", old, new, "--", folder, *more
            )
        )

    def commit_paths(self, commit: str) -> list[str]:
        """Paths `commit` changes (both sides of a rename). For a merge, only the paths that
        differ from every parent (`--cc`): a clean merge changes nothing of its own."""
        return nul_list(
            self.run_checked(
                "diff-tree", "--root", "--cc", "-r", "--name-only", "--no-renames",
                "--no-commit-id", "-z", commit,
            )
        )  # fmt: skip

    def default_base(self) -> str | None:
        """Where the current branch left what it is compared with: the merge base with its
        upstream, else with main or master (local or origin's); None when there is none."""
        proc = self.run_raw("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")
        candidates = [proc.stdout.decode().strip()] if proc.returncode == 0 else []
        candidates += ["main", "master", "origin/main", "origin/master"]
        for candidate in candidates:
            if candidate and self.verify(f"{candidate}^{{commit}}"):
                base = self.run_raw("merge-base", "HEAD", candidate)
                if base.returncode == 0:
                    return base.stdout.decode().strip()
        return None

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        proc = self.run_raw("merge-base", "--is-ancestor", ancestor, commit)
        if proc.returncode not in (0, 1):
            raise git_error(("merge-base",), proc)
        return proc.returncode == 0

    def have_common_history(self, a: str, b: str) -> bool:
        return self.run_raw("merge-base", a, b).returncode == 0
