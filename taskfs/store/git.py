"""The one module that talks to git.

Ledger commits are built without touching the user's staged work: the new files' blobs, the
trees along their paths and the commit are written as loose objects (the format is git's
documented object format), `HEAD` is moved with `git update-ref NEW OLD` (a compare-and-swap,
so a concurrent commit is never overwritten), and the new paths are added to the index so that
the user's `git status` stays clean. `git commit -- PATHS` would do the same but costs three
times a plain commit in a 5,000-task repository, and would run the user's commit hooks.

Every git process runs with a scrubbed environment: taskfs may itself run inside a git hook,
where `GIT_DIR`, `GIT_INDEX_FILE` and friends point somewhere else.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import time
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cached_property
from pathlib import Path

from taskfs.errors import TaskfsError, fail
from taskfs.store.gitdir import find_git_dir

# Variables git sets for hooks or users set for plumbing; any of them would redirect our git.
_KEEP_GIT_VARS = frozenset(
    {
        "GIT_EXEC_PATH",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_ASKPASS",
        "GIT_TERMINAL_PROMPT",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_ALLOW_PROTOCOL",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
        "GIT_TRACE",
    }
)
# A tree edit: a file's new content, None to remove it, or the edits of a subtree.
Nested = dict[str, "bytes | Stored | Nested | None"]
FILE_MODE = "100644"
TREE_MODE = "40000"
# How long a command that writes the index waits for another git process's `index.lock` (an
# editor's or an IDE's `git status` holds it for a moment) before it fails with git's message.
INDEX_LOCK_WAIT_SECONDS = 10.0


def scrubbed_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("GIT_") or k in _KEEP_GIT_VARS or k.startswith("GIT_CONFIG_")
    }
    if "GIT_CONFIG_COUNT" not in env:
        env = {k: v for k, v in env.items() if not k.startswith("GIT_CONFIG_KEY_")}
    env["LC_ALL"] = "C"
    env["GIT_TERMINAL_PROMPT"] = "0"
    # Reading commands (`status`) must not take the index lock to refresh it: that would make
    # a user's `git commit`, or another taskfs writer's `git add`, fail for a moment.
    env["GIT_OPTIONAL_LOCKS"] = "0"
    if extra:
        env.update(extra)
    return env


@dataclass(frozen=True)
class Stored:
    """A file's blob that git already wrote (through the file's clean filter): taken as is."""

    oid: str


@dataclass(frozen=True)
class Author:
    """The commit that made a change, and who it names as its author."""

    commit: str
    name: str
    email: str


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    @classmethod
    def agent(cls, agent: str) -> Identity:
        return cls(agent, f"{agent}@taskfs")


def _object_format(common_dir: Path) -> str:
    """`sha256` when the repository's config says so (extensions.objectFormat), else sha1."""
    try:
        config = (common_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "sha1"
    found = re.search(r"(?im)^\s*objectformat\s*=\s*(\w+)", config)
    return found.group(1).lower() if found else "sha1"


class Git:
    """A git working tree, driven through the git command line."""

    def __init__(self, root: Path) -> None:
        self.root = root
        # Read from the files git keeps, not by running git: every ledger write opens a Git.
        self.git_dir = find_git_dir(root)
        commondir = self.git_dir / "commondir"
        self.common_dir = (
            (self.git_dir / commondir.read_text().strip()).resolve()
            if commondir.is_file()
            else self.git_dir
        )
        self.last_commit: tuple[str | None, str] | None = None  # (parent, commit) of ours
        sha256 = _object_format(self.common_dir) == "sha256"
        self._hash = hashlib.sha256 if sha256 else hashlib.sha1
        self.zero = "0" * self._hash().digest_size * 2

    @staticmethod
    def init(root: Path) -> None:
        proc = subprocess.run(
            ["git", "init", "--quiet", str(root)],
            capture_output=True,
            env=scrubbed_env(),
            stdin=subprocess.DEVNULL,
            check=False,
        )
        if proc.returncode != 0:
            raise git_error(("init",), proc)

    # -- running git -------------------------------------------------------------------

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> str:
        proc = self.run_raw(*args, input=input, env=env)
        if check and proc.returncode != 0:
            raise git_error(args, proc)
        return proc.stdout.decode("utf-8", "replace").strip()

    def run_raw(
        self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        try:
            return subprocess.run(
                ["git", *args],
                cwd=self.root,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                env=scrubbed_env(env),
                check=False,
            )
        except OSError as exc:
            raise fail("git_failed", command=args[0], reason=str(exc)) from None

    def run_index(
        self, *args: str, env: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """A git command that writes the index, run again while another git process holds
        the index lock (git fails at once then, having changed nothing), for up to
        `INDEX_LOCK_WAIT_SECONDS`."""
        deadline = time.monotonic() + INDEX_LOCK_WAIT_SECONDS
        delay = 0.01
        while True:
            proc = self.run_raw(*args, env=env)
            if proc.returncode == 0 or b"index.lock" not in proc.stderr:
                return proc
            if time.monotonic() + delay > deadline:
                return proc
            time.sleep(delay)
            delay = min(delay * 2, 0.2)

    # -- reading -----------------------------------------------------------------------

    @contextmanager
    def reader(self) -> Iterator[ObjectReader]:
        reader = ObjectReader(self)
        try:
            yield reader
        finally:
            reader.close()

    def head(self) -> str | None:
        """The commit HEAD points at, or None on a branch with no commits yet."""
        proc = self.run_raw("rev-parse", "--verify", "--quiet", "HEAD^{commit}")
        return proc.stdout.decode().strip() or None

    def head_guess(self) -> str | None:
        """HEAD read from git's files without running git (loose or packed refs); `head()`
        when the files say nothing clear. Only for a compare-and-swap that checks it."""
        try:
            text = (self.git_dir / "HEAD").read_text().strip()
            if not text.startswith("ref: "):
                return text if len(text) == len(self.zero) else self.head()
            ref = text[len("ref: ") :]
            loose = self.common_dir / ref
            if loose.is_file():
                return loose.read_text().strip()
            for line in (self.common_dir / "packed-refs").read_text().splitlines():
                oid, _space, name = line.partition(" ")
                if name == ref:
                    return oid
        except OSError:
            pass
        return self.head()

    def changes_after_creation(self, folder: str) -> list[tuple[str, str, str]]:
        """(commit, M or D, path) for every commit in HEAD's history that modified or deleted
        a file under `folder`; merges are diffed against all their parents (`--cc`), so a
        merge that edits a file on its own is caught too. `--full-history` keeps side branches
        that a merge made invisible (one that took the other side wholesale, `-s ours`)."""
        if self.head() is None:
            return []
        out = self.run(
            "log",
            "--full-history",
            "--cc",
            "--no-renames",
            "--name-status",
            "--diff-filter=MD",
            "--format=%x00%H",
            "HEAD",
            "--",
            folder,
        )
        found: list[tuple[str, str, str]] = []
        commit = ""
        for line in out.splitlines():
            if line.startswith("\0"):
                commit = line[1:]
            elif line.strip():
                status, _tab, path = line.partition("\t")
                found.append((commit, status.strip()[:1], path))
        return found

    def path_history(self, folder: str) -> list[tuple[str, str, str, str]]:
        """(commit, author name, A/M/D, path) for every commit in HEAD's history that added,
        modified or deleted a file under `folder`, newest first (merges diffed with --cc)."""
        if self.head() is None:
            return []
        out = self.run(
            "log",
            "--cc",
            "--no-renames",
            "--name-status",
            "--diff-filter=AMD",
            "--format=%x00%H%x00%an",
            "HEAD",
            "--",
            folder,
        )
        found: list[tuple[str, str, str, str]] = []
        commit = author = ""
        for line in out.splitlines():
            if line.startswith("\0"):
                commit, _nul, author = line[1:].partition("\0")
            elif line.strip():
                status, _tab, path = line.partition("\t")
                found.append((commit, author, status.strip()[:1], path))
        return found

    def file_additions(
        self, folders: Sequence[str], revisions: Sequence[str] = ("HEAD",)
    ) -> dict[str, Author]:
        """The commit that added each file under `folders` in the history of `revisions` (the
        latest one, when a file was added again), with that commit's author. A file a merge
        brought together is credited to the commit on its side branch that added it."""
        if not revisions or self.head() is None:
            return {}
        out = self.run_raw(
            "log",
            "--no-renames",
            "--diff-filter=A",
            "--name-only",
            "-z",
            "--format=%x01%H%x00%an%x00%ae",
            "--end-of-options",
            *revisions,
            "--",
            *folders,
            env={"GIT_LITERAL_PATHSPECS": "1"},
        )
        if out.returncode != 0:
            raise git_error(("log",), out)
        found: dict[str, Author] = {}
        fields = out.stdout.decode("utf-8", "surrogateescape").split("\0")
        author = Author("", "", "")
        i = 0
        while i < len(fields):
            field = fields[i].lstrip("\n")
            if field.startswith("\x01") and i + 2 < len(fields):
                author = Author(field[1:], fields[i + 1], fields[i + 2])
                i += 3
                continue
            if field and author.commit:
                found.setdefault(field, author)
            i += 1
        return found

    def worktree_files(self, below: Sequence[str] = ()) -> list[str]:
        """Every tracked file and every untracked file git does not ignore, as paths relative
        to the working tree (tracked files deleted from the tree included), sorted, once each;
        only those at or below the literal paths `below` when it names any."""
        spec = ("--", *below) if below else ()
        out = self.run_raw(
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
            *spec,
            env={"GIT_LITERAL_PATHSPECS": "1"} if below else None,
        )
        if out.returncode != 0:
            raise git_error(("ls-files",), out)
        names = out.stdout.decode("utf-8", "surrogateescape").split("\0")
        return sorted({name for name in names if name})

    def add_worktree(self, path: Path, commit: str) -> Git:
        """A detached checkout of `commit` at `path` (new or empty); remove it with
        `remove_worktree`."""
        self.run("worktree", "add", "--detach", "--quiet", str(path), commit)
        return Git(path)

    def remove_worktree(self, path: Path) -> None:
        """Remove a worktree made by `add_worktree`, whatever state it was left in."""
        self.run_raw("worktree", "remove", "--force", "--force", str(path))
        if path.exists():
            # The check left something git would not delete (a read-only folder, say).
            shutil.rmtree(path, ignore_errors=True)
        self.run_raw("worktree", "prune")

    def messages(self, grep: str, since: str | None = None) -> list[str]:
        """The messages of the commits in HEAD's history (after `since`) matching `grep`."""
        if self.head() is None:
            return []
        revisions = f"{since}..HEAD" if since else "HEAD"
        out = self.run("log", "--format=%B%x00", "-E", f"--grep={grep}", revisions)
        return [m.strip() for m in out.split("\0") if m.strip()]

    def tracked(self, paths: Sequence[str]) -> set[str]:
        """Those of `paths` (repository-relative) that the index holds."""
        if not paths:
            return set()
        out = self.run_raw("ls-files", "-z", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"})
        return {p for p in out.stdout.decode("utf-8", "surrogateescape").split("\0") if p}

    def worktree_changes(self, folder: str) -> list[tuple[str, str]]:
        """(porcelain status, path) of files under `folder` that differ from HEAD."""
        out = self.run_raw("status", "--porcelain", "-z", "--untracked-files=all", "--", folder)
        entries = out.stdout.decode("utf-8", "surrogateescape").split("\0")
        return [(e[:2], e[3:]) for e in entries if len(e) > 3]

    # -- what a commit changes (the ownership guard) -----------------------------------

    def staged_paths(self, index_file: str | None = None) -> list[str]:
        """Paths the next commit would change: added, modified, deleted, and both sides of a
        rename. `index_file` is the index git hands a pre-commit hook (`GIT_INDEX_FILE`, which
        `git commit -a` or `git commit PATHS` point at a temporary index).

        While a merge is being concluded, only what the merge itself changes counts (paths
        that differ from every parent, as `--cc` shows a merge commit), not what it brings in
        from the other side: those commits were checked on their own.
        """
        env = {"GIT_INDEX_FILE": str(self.root / index_file)} if index_file else None
        merging = self.merge_heads()
        parent = self.head()
        if merging and parent:
            # The merge as it would be committed: a commit object nothing refers to (git's gc
            # removes it), so that `--cc` can say what the merge changes itself.
            tree = self.run("write-tree", env=env)
            parents = [arg for p in (parent, *merging) for arg in ("-p", p)]
            ident = Identity.agent("taskfs")
            who = {
                f"GIT_{role}_{part}": value
                for role in ("AUTHOR", "COMMITTER")
                for part, value in (("NAME", ident.name), ("EMAIL", ident.email))
            }
            commit = self.run(
                "commit-tree", "--no-gpg-sign", tree, *parents, input=b"merge\n", env=who
            )
            return self.commit_paths(commit)
        out = self.run_raw(
            "diff", "--cached", "--name-only", "--no-renames", "-z", "--no-ext-diff", env=env
        )
        if out.returncode != 0:
            raise git_error(("diff",), out)
        return _nul_list(out.stdout)

    def merge_heads(self) -> list[str]:
        """The commits being merged in, while a merge waits to be committed."""
        try:
            text = (self.git_dir / "MERGE_HEAD").read_text(encoding="ascii", errors="replace")
        except OSError:
            return []
        return [line.strip() for line in text.splitlines() if line.strip()]

    def commit_paths(self, commit: str) -> list[str]:
        """Paths `commit` changes (both sides of a rename). For a merge, only the paths that
        differ from every parent (`--cc`): a clean merge changes nothing of its own."""
        out = self.run_raw(
            "diff-tree",
            "--root",
            "--cc",
            "-r",
            "--name-only",
            "--no-renames",
            "--no-commit-id",
            "-z",
            commit,
        )
        if out.returncode != 0:
            raise git_error(("diff-tree",), out)
        return _nul_list(out.stdout)

    def commits(self, rev_range: str) -> list[tuple[str, str]]:
        """(commit, author name) for every commit of `rev_range` (as `git log` takes it),
        oldest first."""
        out = self.run(
            "log", "--reverse", "--format=%H%x09%an", "--end-of-options", rev_range, "--"
        )
        rows = [line.split("\t", 1) for line in out.splitlines() if line]
        return [(row[0], row[1] if len(row) > 1 else "") for row in rows]

    def author_name(self) -> str | None:
        """The author name the next commit would get (git sets `GIT_AUTHOR_NAME` for hooks)."""
        passed = {
            k: os.environ[k] for k in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL") if k in os.environ
        }
        proc = self.run_raw("var", "GIT_AUTHOR_IDENT", env=passed)
        ident = proc.stdout.decode("utf-8", "replace").strip()
        name = ident.split(" <", 1)[0].strip() if proc.returncode == 0 else ""
        return name or passed.get("GIT_AUTHOR_NAME") or None

    def hook_path(self, name: str) -> Path:
        """Where git looks for hook `name` (core.hooksPath respected)."""
        return self.root / self.run("rev-parse", "--git-path", f"hooks/{name}")

    def tree_id(self, rev: str, folder: str) -> str | None:
        """The tree `folder` has in commit `rev`, or None when it has none."""
        proc = self.run_raw("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}:{folder}")
        return proc.stdout.decode().strip() or None

    def tree_blobs(self, tree: str) -> dict[str, str]:
        """Path (relative to `tree`) to blob id, for every file below a tree."""
        out = self.run_raw("ls-tree", "-r", "-z", "--full-tree", tree)
        if out.returncode != 0:
            raise git_error(("ls-tree",), out)
        blobs: dict[str, str] = {}
        for row in _nul_list(out.stdout):
            info, _tab, path = row.partition("\t")
            _mode, kind, oid = info.split()
            if kind == "blob":
                blobs[path] = oid
        return blobs

    # -- ranges, for review -------------------------------------------------------------

    def verify(self, revision: str) -> str | None:
        """The commit a revision names, or None."""
        if revision.startswith("-"):
            return None
        proc = self.run_raw("rev-parse", "--verify", "--quiet", "--end-of-options", revision)
        return proc.stdout.decode().strip() or None

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

    def commits_in(self, revisions: str) -> list[str]:
        """The commits of a range (`A..B`, `A...B`), oldest first; `git_failed` when git
        does not know it."""
        out = self.run("rev-list", "--reverse", "--end-of-options", revisions, "--")
        return out.split()

    def added_files(self, revisions: str, folder: str) -> list[tuple[str, str, str]]:
        """(commit, author, path) of every file under `folder` that a commit of the range
        added, oldest first."""
        out = self.run(
            "log",
            "--reverse",
            "--no-renames",
            "--name-status",
            "--diff-filter=A",
            "--format=%x00%H%x00%an",
            "--end-of-options",
            revisions,
            "--",
            folder,
        )
        found: list[tuple[str, str, str]] = []
        commit = author = ""
        for line in out.splitlines():
            if line.startswith("\0"):
                _empty, commit, author = line.split("\0", 2)
            elif line.strip():
                _status, _tab, path = line.partition("\t")
                found.append((commit, author, path))
        return found

    def read_blobs(self, wanted: Sequence[tuple[str, str]]) -> list[bytes | None]:
        """The bytes of each (commit, path) as that commit holds it (None when it holds none),
        through one `git cat-file` process."""
        out: list[bytes | None] = []
        with self.reader() as reader:
            for commit, path in wanted:
                found = reader.read(f"{commit}:{path}")
                out.append(found[1] if found and found[0] == "blob" else None)
        return out

    # -- writing -----------------------------------------------------------------------

    def commit_files(
        self,
        paths: Sequence[str],
        message: str,
        author: Identity,
        *,
        when: datetime | None = None,
        removed: Sequence[str] = (),
    ) -> str:
        """Commit the working-tree content of `paths` (repository-relative) onto HEAD, and the
        removal of `removed` (files the change consumed; the caller deletes them afterwards).

        Only these paths change, relative to HEAD; the user's other staged or unstaged work
        stays as it was. Returns the new commit id. Raises `TaskfsError` (git_failed) when HEAD
        moved under us too often, which only concurrent non-taskfs commits can cause.
        """
        raw = {p: (self.root / p).read_bytes() for p in paths}
        # The blob `git add` writes is the file through its clean filter (.gitattributes), if
        # one applies. When it wrote the raw bytes' blob, that is the blob; otherwise the
        # index says which it wrote, and the commit takes the same, so `git status` is clean.
        oids = {
            p: self._hash(b"blob %d\0" % len(data) + data).hexdigest() for p, data in raw.items()
        }
        known = {p for p, oid in oids.items() if self._loose(oid)}
        if paths:
            args = ("add", "--force", "--", *paths)
            proc = self.run_index(*args, env={"GIT_LITERAL_PATHSPECS": "1"})
            if proc.returncode != 0:
                raise git_error(args, proc)
        contents: dict[str, bytes | Stored | None] = dict(raw)
        unsure = [p for p, oid in oids.items() if p in known or not self._loose(oid)]
        contents.update({p: Stored(oid) for p, oid in self._index_blobs(unsure).items()})
        contents.update(dict.fromkeys(removed))
        if removed:
            args = ("update-index", "--force-remove", "--", *removed)
            proc = self.run_index(*args)
            if proc.returncode != 0:
                raise git_error(args, proc)
        try:
            return self._commit_onto_head(contents, message, author, when)
        except TaskfsError:
            # Nothing was committed (signing failed, say): the index goes back to HEAD's for
            # these paths, so no half-made change stays staged.
            self.run_index(
                "reset", "-q", "--", *paths, *removed, env={"GIT_LITERAL_PATHSPECS": "1"}
            )
            raise

    def _commit_onto_head(
        self,
        contents: dict[str, bytes | Stored | None],
        message: str,
        author: Identity,
        when: datetime | None,
    ) -> str:
        parent = self.head_guess()
        while True:
            with self.reader() as reader:
                base_tree = reader.commit_tree(parent) if parent else None
                tree = self._write_tree(reader, base_tree, _nest(contents))
            commit = self.write_commit(tree, (parent,) if parent else (), message, author, when)
            old = parent or self.zero
            proc = self.run_raw("update-ref", "-m", _first_line(message), "HEAD", commit, old)
            if proc.returncode == 0:
                # What the ledger cache needs to know that this commit was the only change.
                self.last_commit = (parent, commit)
                return commit
            # Someone else's commit moved HEAD between our read and our swap (or the guess
            # from the files was wrong): build again on top of it. Any other failure is git's.
            moved = self.head()
            if moved == parent:
                raise git_error(("update-ref",), proc)
            parent = moved

    def _write_tree(self, reader: ObjectReader, base: str | None, changes: Nested) -> str:
        """The tree `base` with `changes` applied (the empty tree when nothing is left).

        The base's entries are kept as the bytes git wrote: a tasks folder of thousands of
        tasks is re-joined, not re-encoded, when one task's entry changes."""
        size = self._hash().digest_size
        entries = _tree_entries(reader.tree_body(base) or b"", size) if base else {}
        resort = False  # whether an entry was added or changed between file and folder
        for name, change in changes.items():
            raw = name.encode("utf-8", "surrogateescape")
            old = entries.get(raw)
            old_mode = old[: old.index(b" ")].decode() if old else None
            if change is None:
                entries.pop(raw, None)
                continue
            if isinstance(change, Stored):
                mode, oid = FILE_MODE, change.oid
            elif isinstance(change, bytes):
                mode, oid = FILE_MODE, self.write_object("blob", change)
            else:
                sub_base = old[-size:].hex() if old and old_mode == TREE_MODE else None
                mode, oid = TREE_MODE, self._write_tree(reader, sub_base, change)
                if oid == self.empty_tree:
                    entries.pop(raw, None)  # git keeps no empty folders
                    continue
            resort = resort or mode != old_mode
            entries[raw] = f"{mode} ".encode() + raw + b"\0" + bytes.fromhex(oid)
        if resort:
            # git orders tree entries by name, comparing a subtree's name as if it ended in "/".
            order = sorted(entries, key=lambda n: n + b"/" if entries[n][:6] == b"40000 " else n)
            body = b"".join(entries[n] for n in order)
        else:
            body = b"".join(entries.values())  # the base's order, which git made
        return self.write_object("tree", body)

    def _loose(self, oid: str) -> bool:
        return (self.common_dir / "objects" / oid[:2] / oid[2:]).exists()

    def _index_blobs(self, paths: Sequence[str]) -> dict[str, str]:
        """The blob the index holds for each of `paths` (that it holds)."""
        if not paths:
            return {}
        out = self.run_raw(
            "ls-files", "--stage", "-z", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"}
        )
        if out.returncode != 0:
            raise git_error(("ls-files",), out)
        found: dict[str, str] = {}
        for row in _nul_list(out.stdout):
            info, _tab, path = row.partition("\t")
            found[path] = info.split()[1]
        return found

    @cached_property
    def empty_tree(self) -> str:
        return self.write_object("tree", b"")

    def write_commit(
        self,
        tree: str,
        parents: Sequence[str],
        message: str,
        author: Identity,
        when: datetime | None = None,
    ) -> str:
        moment = when or datetime.now(timezone.utc)
        # The user's own offset, as plain git writes it (TZ respected): the instant is the same.
        stamp = f"{int(moment.timestamp())} {moment.astimezone().strftime('%z') or '+0000'}"
        if self.signs_commits:
            return self._signed_commit(tree, parents, message, author, stamp)
        ident = f"{_clean(author.name)} <{_clean(author.email)}> {stamp}"
        lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
        lines += [f"author {ident}", f"committer {ident}", "", message.rstrip("\n"), ""]
        return self.write_object("commit", "\n".join(lines).encode())

    @cached_property
    def signs_commits(self) -> bool:
        """Whether the user's git signs commits (`commit.gpgSign`): branch protection may
        refuse ledger commits that are not signed."""
        proc = self.run_raw("config", "--type=bool", "--get", "commit.gpgsign")
        return proc.returncode == 0 and proc.stdout.strip() == b"true"

    def _signed_commit(
        self, tree: str, parents: Sequence[str], message: str, author: Identity, stamp: str
    ) -> str:
        """The commit made by `git commit-tree`, which signs it as the user's git is set up to
        (`user.signingKey`, `gpg.format` openpgp, ssh or x509)."""
        who = {
            f"GIT_{role}_{part}": value
            for role in ("AUTHOR", "COMMITTER")
            for part, value in (
                ("NAME", _clean(author.name)),
                ("EMAIL", _clean(author.email)),
                ("DATE", stamp),
            )
        }
        args = ["commit-tree", tree, *(arg for p in parents for arg in ("-p", p)), "-S"]
        text = message.rstrip("\n") + "\n"
        return self.run(*args, input=text.encode(), env=who)

    def write_object(self, kind: str, body: bytes) -> str:
        """Store a loose object the way git does; returns its id."""
        data = f"{kind} {len(body)}\0".encode() + body
        oid = self._hash(data).hexdigest()
        folder = self.common_dir / "objects" / oid[:2]
        target = folder / oid[2:]
        if target.exists():
            return oid
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f"tmp_obj_{os.getpid()}_{oid[2:10]}"
        tmp.write_bytes(zlib.compress(data))
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)
        return oid

    # -- exchanging with a remote (taskfs sync) ------------------------------------------

    def branch(self) -> str | None:
        """The branch HEAD is on; None when HEAD is detached."""
        proc = self.run_raw("symbolic-ref", "--quiet", "--short", "HEAD")
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def config(self, key: str) -> str | None:
        proc = self.run_raw("config", "--get", key)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def remotes(self) -> list[str]:
        return self.run("remote").split()

    def operation_in_progress(self) -> str | None:
        """The git operation (merge, rebase, ...) left unfinished in this checkout, if any."""
        markers = {
            "MERGE_HEAD": "a merge",
            "rebase-merge": "a rebase",
            "rebase-apply": "a rebase or am",
            "CHERRY_PICK_HEAD": "a cherry-pick",
            "REVERT_HEAD": "a revert",
        }
        for name, what in markers.items():
            if (self.git_dir / name).exists():
                return what
        return "a conflict resolution" if self.unmerged_paths("") else None

    def unmerged_paths(self, folder: str) -> list[str]:
        out = self.run_raw("ls-files", "--unmerged", "-z", "--", folder or ".").stdout
        paths = {
            e.split("\t", 1)[1]
            for e in out.decode("utf-8", "surrogateescape").split("\0")
            if "\t" in e
        }
        return sorted(paths)

    def fetch(self, remote: str, branch: str) -> str | None:
        """Fetch `branch` of `remote` into its remote-tracking ref and return its commit; None
        when the remote has no such branch yet."""
        tracking = f"refs/remotes/{remote}/{branch}"
        proc = self.run_raw(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            remote,
            f"+refs/heads/{branch}:{tracking}",
        )
        if proc.returncode != 0:
            if b"couldn't find remote ref" in proc.stderr:
                return None
            raise git_error(("fetch",), proc)
        return self.run("rev-parse", "--verify", f"{tracking}^{{commit}}")

    def push(self, remote: str, commit: str, branch: str) -> str | None:
        """Push `commit` to `branch` of `remote` (never forced). None when it landed, else git's
        reason for refusing it; a failure to reach the remote raises."""
        proc = self.run_raw("push", "--porcelain", remote, f"{commit}:refs/heads/{branch}")
        refused = [
            line.split("\t")[-1]
            for line in proc.stdout.decode("utf-8", "replace").splitlines()
            if line.startswith("!\t")
        ]
        if proc.returncode == 0 and not refused:
            self.run("update-ref", f"refs/remotes/{remote}/{branch}", commit)
            return None
        if refused:
            return "; ".join(refused)
        raise git_error(("push",), proc)

    def is_ancestor(self, ancestor: str, commit: str) -> bool:
        proc = self.run_raw("merge-base", "--is-ancestor", ancestor, commit)
        if proc.returncode not in (0, 1):
            raise git_error(("merge-base",), proc)
        return proc.returncode == 0

    def have_common_history(self, a: str, b: str) -> bool:
        return self.run_raw("merge-base", a, b).returncode == 0

    def merge_tree(self, ours: str, theirs: str) -> tuple[str, list[str]]:
        """The tree `git merge` would make of two commits, and the paths that conflict; the
        repository, its index and working tree are left untouched."""
        proc = self.run_raw(
            "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs
        )
        if proc.returncode not in (0, 1):
            raise git_error(("merge-tree",), proc)
        tree, *paths = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        return tree.strip(), sorted({p for p in paths if p})

    def unpublished(self, head: str) -> list[str]:
        """The commits of `head` that no remote-tracking ref holds, parents before children."""
        out = self.run("rev-list", "--topo-order", "--reverse", head, "--not", "--remotes")
        return out.split()

    def unpublished_additions(self, head: str, folder: str) -> list[str]:
        """Paths under `folder` added by commits of `head` that no remote-tracking ref holds."""
        out = self.run(
            "log",
            "--full-history",
            "--no-renames",
            "--diff-filter=A",
            "--name-only",
            "--format=",
            head,
            "--not",
            "--remotes",
            "--",
            folder,
        )
        return sorted({line for line in out.splitlines() if line})

    def added_between(self, a: str, b: str, folder: str) -> list[str]:
        """Paths under `folder` added by a commit that one of `a` and `b` holds and the other
        does not (the symmetric difference `a...b`)."""
        out = self.run(
            "log",
            "--no-renames",
            "--diff-filter=A",
            "--name-only",
            "--format=",
            f"{a}...{b}",
            "--",
            folder,
        )
        return sorted({line for line in out.splitlines() if line})

    def changed_paths(self, old: str, new: str, folder: str) -> list[str]:
        out = self.run("diff", "--name-only", "--no-renames", old, new, "--", folder)
        return out.splitlines()

    def additions(self, glob: str) -> list[tuple[str, str, str]]:
        """(commit, path, blob) for every commit in HEAD's history (side branches included)
        that added a file matching `glob`."""
        if self.head() is None:
            return []
        out = self.run(
            "log",
            "--full-history",
            "--no-renames",
            "--no-abbrev",
            "--diff-filter=A",
            "--raw",
            "--format=%x00%H",
            "HEAD",
            "--",
            f":(glob){glob}",
        )
        found: list[tuple[str, str, str]] = []
        commit = ""
        for line in out.splitlines():
            if line.startswith("\0"):
                commit = line[1:]
            elif line.startswith(":"):
                meta, _tab, path = line.partition("\t")
                found.append((commit, path, meta.split()[3]))
        return found

    def rewrite(
        self, commits: Sequence[str], edits: Mapping[str, tuple[str, bytes] | None]
    ) -> dict[str, str]:
        """Rewrite `commits` (parents first) with `edits` applied to every tree that holds the
        edited path: the path is removed and, unless its edit is None, (new path, content) is
        added in its place. Authors, dates and messages are kept (signatures cannot be). A
        commit whose only change was removed is dropped. Returns old -> new commit ids; used
        only on commits no remote holds."""
        mapped: dict[str, str] = {}
        with self.reader() as reader:
            for commit in commits:
                found = reader.read(commit)
                if found is None or found[0] != "commit":
                    raise fail("git_failed", command="cat-file", reason=f"{commit} is not a commit")
                head, _sep, message = found[1].partition(b"\n\n")
                tree, parents = _tree_and_parents(head)
                new_parents = list(dict.fromkeys(mapped.get(p, p) for p in parents))
                changes: dict[str, bytes | None] = {}
                for old, edit in edits.items():
                    if reader.exists(f"{tree}:{old}"):
                        changes[old] = None
                        if edit is not None:
                            changes[edit[0]] = edit[1]
                new_tree = self._write_tree(reader, tree, _nest(changes)) if changes else tree
                if (
                    changes
                    and len(parents) == 1
                    and new_tree == reader.commit_tree(new_parents[0])
                    and tree != reader.commit_tree(parents[0])
                ):
                    mapped[commit] = new_parents[0]
                    continue
                if new_tree == tree and new_parents == parents:
                    continue
                body = _rewritten_header(head, new_tree, new_parents) + b"\n\n" + message
                mapped[commit] = self.write_object("commit", body)
        return mapped

    def switch_tree(self, old: str | None, new: str) -> list[str]:
        """Move the index and working tree from commit `old` to commit `new`, carrying the
        user's uncommitted changes as `git checkout` does. Returns the paths whose uncommitted
        changes (or untracked files) would be overwritten; nothing is changed then."""
        self.run_index("update-index", "-q", "--refresh")
        proc = self.run_index("read-tree", "-m", "-u", old or self.empty_tree, new)
        if proc.returncode == 0:
            return []
        blocked = re.findall(r"'([^']+)'", proc.stderr.decode("utf-8", "surrogateescape"))
        if not blocked or b"index.lock" in proc.stderr:  # the lock's path is no user file
            raise git_error(("read-tree",), proc)
        return sorted(set(blocked))

    def move_head(self, new: str, old: str | None, message: str) -> bool:
        """Point HEAD at `new` if it still points at `old` (a compare-and-swap)."""
        proc = self.run_raw("update-ref", "-m", message, "HEAD", new, old or self.zero)
        return proc.returncode == 0

    def arrivals(self, revision: str, folder: str) -> list[tuple[str, str]]:
        """(commit, path) of every file under `folder` in the order it arrived on the
        first-parent line of `revision`, oldest first: a file merged in arrives with its merge.
        As the line only grows, a file's place never changes, and a later file never comes
        before an earlier one (the order `taskfs a2a` streams a task's entries in)."""
        out = self.run(
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--reverse",
            "--no-renames",
            "--name-status",
            "--diff-filter=A",
            "--format=%x00%H",
            "--end-of-options",
            revision,
            "--",
            folder,
        )
        found: list[tuple[str, str]] = []
        commit = ""
        for line in out.splitlines():
            if line.startswith("\0"):
                commit = line[1:]
            elif line.strip():
                _status, _tab, path = line.partition("\t")
                found.append((commit, path))
        return found

    # -- what no commit holds (decisions rest on HEAD: taskfs.store.loose) -----------------

    def not_at_head(self, pathspecs: Sequence[str]) -> list[tuple[str, str]]:
        """(kind, path) of every file under `pathspecs` whose working-tree or index content is
        not what HEAD holds: `untracked` (ignored files included: taskfs would read them just
        the same) or `changed` (edited, deleted, staged). `git diff HEAD` compares contents,
        so a file only touched is not changed. Scoped by the caller: it costs a stat per
        tracked file under the pathspecs."""
        if not pathspecs:
            return []
        env = {"GIT_LITERAL_PATHSPECS": "1"}
        found: list[tuple[str, str]] = []
        if self.head_guess() is None:
            listed = self.run_raw("ls-files", "-z", "--cached", "--", *pathspecs, env=env)
            found += [("changed", p) for p in _nul_list(listed.stdout)]
        else:
            diff = self.run_raw(
                "diff", "HEAD", "--name-only", "-z", "--no-renames", "--no-ext-diff",
                "--", *pathspecs, env=env,
            )  # fmt: skip
            if diff.returncode != 0:
                raise git_error(("diff",), diff)
            found += [("changed", p) for p in _nul_list(diff.stdout)]
        other = self.run_raw("ls-files", "-z", "--others", "--", *pathspecs, env=env)
        if other.returncode != 0:
            raise git_error(("ls-files",), other)
        found += [("untracked", p) for p in _nul_list(other.stdout)]
        return found

    def uncommitted_files(self) -> list[str]:
        """Every path whose working-tree content HEAD does not hold: tracked files edited,
        deleted or staged, and untracked files git does not ignore (work not committed)."""
        if self.head_guess() is None:
            return self.worktree_files()
        diff = self.run_raw("diff", "HEAD", "--name-only", "-z", "--no-renames", "--no-ext-diff")
        if diff.returncode != 0:
            raise git_error(("diff",), diff)
        other = self.run_raw("ls-files", "-z", "--others", "--exclude-standard")
        if other.returncode != 0:
            raise git_error(("ls-files",), other)
        return sorted(set(_nul_list(diff.stdout)) | set(_nul_list(other.stdout)))

    def head_files(self, pathspecs: Sequence[str]) -> dict[str, bytes]:
        """The bytes HEAD holds of every file under `pathspecs`, by repository-relative path."""
        if not pathspecs or self.head_guess() is None:
            return {}
        env = {"GIT_LITERAL_PATHSPECS": "1"}
        listed = self.run_raw(
            "ls-tree", "-r", "-z", "--full-tree", "HEAD", "--", *pathspecs, env=env
        )
        if listed.returncode != 0:
            raise git_error(("ls-tree",), listed)
        wanted: list[tuple[str, str]] = []
        for line in _nul_list(listed.stdout):
            meta, _tab, path = line.partition("\t")
            mode, kind, oid = meta.split(" ")
            if kind == "blob" and mode.startswith("100"):
                wanted.append((path, oid))
        out: dict[str, bytes] = {}
        with self.reader() as reader:
            for path, oid in wanted:
                found = reader.read(oid)
                if found is not None and found[0] == "blob":
                    out[path] = found[1]
        return out


class ObjectReader:
    """One long-lived `git cat-file --batch` for all reads of a command; closed after use."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._proc = subprocess.Popen(
            ["git", "cat-file", "--batch"],
            cwd=git.root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=scrubbed_env(),
        )

    def read(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of the object `name` (any revision syntax), None when missing."""
        assert self._proc.stdin is not None
        assert self._proc.stdout is not None
        self._proc.stdin.write(name.encode() + b"\n")
        self._proc.stdin.flush()
        header = self._proc.stdout.readline().decode().split()
        if len(header) != 3:
            return None
        _oid, kind, size = header
        body = self._proc.stdout.read(int(size))
        self._proc.stdout.read(1)
        return kind, body

    def commit_tree(self, commit: str) -> str:
        found = self.read(commit)
        if found is None or found[0] != "commit":
            raise fail("git_failed", command="cat-file", reason=f"{commit} is not a commit")
        first = found[1].split(b"\n", 1)[0].decode()
        return first.split()[1]

    def tree(self, oid: str) -> Iterator[tuple[str, tuple[str, str]]]:
        found = self.read(oid)
        if found is None or found[0] != "tree":
            return
        yield from _parse_tree(found[1], self._git._hash().digest_size)

    def tree_body(self, oid: str) -> bytes | None:
        """A tree object's bytes; None when `oid` is not a tree."""
        found = self.read(oid)
        return found[1] if found is not None and found[0] == "tree" else None

    def tree_at(self, revision_path: str) -> list[tuple[str, tuple[str, str]]]:
        """The entries of the tree `revision_path` names (e.g. `HEAD:tasks`); [] if none."""
        found = self.read(revision_path)
        if found is None or found[0] != "tree":
            return []
        return list(_parse_tree(found[1], self._git._hash().digest_size))

    def exists(self, revision_path: str) -> bool:
        return self.read(revision_path) is not None

    def close(self) -> None:
        if self._proc.stdin:
            self._proc.stdin.close()
        if self._proc.stdout:
            self._proc.stdout.close()
        self._proc.wait()


def _parse_tree(body: bytes, digest_size: int) -> Iterator[tuple[str, tuple[str, str]]]:
    i = 0
    while i < len(body):
        space = body.index(b" ", i)
        nul = body.index(b"\0", space)
        mode = body[i:space].decode()
        name = body[space + 1 : nul].decode("utf-8", "surrogateescape")
        oid = body[nul + 1 : nul + 1 + digest_size].hex()
        yield name, (mode, oid)
        i = nul + 1 + digest_size


def _tree_entries(body: bytes, digest_size: int) -> dict[bytes, bytes]:
    """A tree's entries in its order: each name (as git stores it) with the entry's bytes."""
    out: dict[bytes, bytes] = {}
    find, i = body.index, 0
    while i < len(body):
        nul = find(b"\0", i)
        end = nul + 1 + digest_size
        out[body[find(b" ", i) + 1 : nul]] = body[i:end]
        i = end
    return out


def _nest(contents: Mapping[str, bytes | Stored | None]) -> Nested:
    root: Nested = {}
    for path, data in contents.items():
        *dirs, leaf = path.split("/")
        node = root
        for part in dirs:
            child = node.setdefault(part, {})
            assert isinstance(child, dict), f"{path} runs through a file"
            node = child
        node[leaf] = data
    return root


def _nul_list(data: bytes) -> list[str]:
    return [p for p in data.decode("utf-8", "surrogateescape").split("\0") if p]


def _tree_and_parents(header: bytes) -> tuple[str, list[str]]:
    tree, parents = "", []
    for line in header.split(b"\n"):
        if line.startswith(b"tree "):
            tree = line[5:].decode()
        elif line.startswith(b"parent "):
            parents.append(line[7:].decode())
    return tree, parents


def _rewritten_header(header: bytes, tree: str, parents: Sequence[str]) -> bytes:
    """A commit header with a new tree and parents; a signature would no longer verify, so it
    goes (its continuation lines start with a space)."""
    out = [f"tree {tree}".encode(), *(f"parent {p}".encode() for p in parents)]
    dropping = False
    for line in header.split(b"\n"):
        if line.startswith(b" "):
            if not dropping:
                out.append(line)
            continue
        key = line.split(b" ", 1)[0]
        dropping = key in (b"tree", b"parent", b"gpgsig", b"gpgsig-sha256")
        if not dropping:
            out.append(line)
    return b"\n".join(out)


def _clean(text: str) -> str:
    return "".join(ch for ch in text if ch not in "<>\n\r\0")


def _first_line(message: str) -> str:
    return message.split("\n", 1)[0]


def git_error(args: Iterable[str], proc: subprocess.CompletedProcess[bytes]) -> TaskfsError:
    args = tuple(args)
    reason = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
    return fail("git_failed", command=args[0] if args else "", reason=reason)
