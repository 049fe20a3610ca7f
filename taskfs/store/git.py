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
import subprocess
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from taskfs.errors import TaskfsError, fail

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
# A change to a tree: new content for a file, None to remove it, or a change to a subtree.
Nested = dict[str, "bytes | Nested | None"]
FILE_MODE = "100644"
TREE_MODE = "40000"


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
    if extra:
        env.update(extra)
    return env


@dataclass(frozen=True)
class Identity:
    name: str
    email: str

    @classmethod
    def agent(cls, agent: str) -> Identity:
        return cls(agent, f"{agent}@taskfs")


def find_worktree(start: Path) -> Path | None:
    """The top of the git working tree holding `start`, found without running git."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


class Git:
    """A git working tree, driven through the git command line."""

    def __init__(self, root: Path) -> None:
        self.root = root
        out = self.run("rev-parse", "--git-dir", "--git-common-dir", "--show-object-format")
        git_dir, common_dir, object_format = out.splitlines()
        self.git_dir = (root / git_dir).resolve()
        self.common_dir = (root / common_dir).resolve()
        self._hash = hashlib.sha256 if object_format == "sha256" else hashlib.sha1
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

    def changes_after_creation(self, folder: str) -> list[tuple[str, str, str]]:
        """(commit, M or D, path) for every commit in HEAD's history that modified or deleted
        a file under `folder`; merges are diffed against all their parents (`--cc`), so a
        merge that edits a file on its own is caught too."""
        if self.head() is None:
            return []
        out = self.run(
            "log",
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

    def messages(self, grep: str, since: str | None = None) -> list[str]:
        """The messages of the commits in HEAD's history (after `since`) matching `grep`."""
        if self.head() is None:
            return []
        revisions = f"{since}..HEAD" if since else "HEAD"
        out = self.run("log", "--format=%B%x00", "-E", f"--grep={grep}", revisions)
        return [m.strip() for m in out.split("\0") if m.strip()]

    def is_ancestor(self, commit: str, of: str) -> bool:
        return self.run_raw("merge-base", "--is-ancestor", commit, of).returncode == 0

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
        contents: dict[str, bytes | None] = {p: (self.root / p).read_bytes() for p in paths}
        contents.update(dict.fromkeys(removed))
        if paths:
            self.run("add", "--force", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"})
        if removed:
            self.run("update-index", "--force-remove", "--", *removed)
        while True:
            parent = self.head()
            with self.reader() as reader:
                base_tree = reader.commit_tree(parent) if parent else None
                tree = self._write_tree(reader, base_tree, _nest(contents))
                tree = tree or self.write_object("tree", b"")
            commit = self._write_commit(tree, parent, message, author, when)
            old = parent or self.zero
            proc = self.run_raw("update-ref", "-m", _first_line(message), "HEAD", commit, old)
            if proc.returncode == 0:
                return commit
            # Someone else's commit moved HEAD between our read and our swap: build again on
            # top of it. Any other failure is git's to report.
            if self.head() == parent:
                raise git_error(("update-ref",), proc)

    def _write_tree(self, reader: ObjectReader, base: str | None, changes: Nested) -> str | None:
        """The tree `base` with `changes` applied; None when nothing is left in it (git keeps
        no empty folders)."""
        entries = dict(reader.tree(base)) if base else {}
        for name, change in changes.items():
            if change is None:
                entries.pop(name, None)
            elif isinstance(change, bytes):
                entries[name] = (FILE_MODE, self.write_object("blob", change))
            else:
                old = entries.get(name)
                sub_base = old[1] if old and old[0] == TREE_MODE else None
                subtree = self._write_tree(reader, sub_base, change)
                if subtree is None:
                    entries.pop(name, None)
                else:
                    entries[name] = (TREE_MODE, subtree)
        if not entries:
            return None
        return self.write_object("tree", _tree_bytes(entries))

    def _write_commit(
        self,
        tree: str,
        parent: str | None,
        message: str,
        author: Identity,
        when: datetime | None,
    ) -> str:
        moment = when or datetime.now(timezone.utc)
        stamp = f"{int(moment.timestamp())} +0000"
        ident = f"{_clean(author.name)} <{_clean(author.email)}> {stamp}"
        lines = [f"tree {tree}"]
        if parent:
            lines.append(f"parent {parent}")
        lines += [f"author {ident}", f"committer {ident}", "", message.rstrip("\n"), ""]
        return self.write_object("commit", "\n".join(lines).encode())

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


def _tree_bytes(entries: Mapping[str, tuple[str, str]]) -> bytes:
    # git orders tree entries by name, comparing a subtree's name as if it ended with "/".
    def key(name: str) -> bytes:
        raw = name.encode("utf-8", "surrogateescape")
        return raw + b"/" if entries[name][0] == TREE_MODE else raw

    out = bytearray()
    for name in sorted(entries, key=key):
        mode, oid = entries[name]
        out += f"{mode} ".encode() + name.encode("utf-8", "surrogateescape") + b"\0"
        out += bytes.fromhex(oid)
    return bytes(out)


def _nest(contents: Mapping[str, bytes | None]) -> Nested:
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


def _clean(text: str) -> str:
    return "".join(ch for ch in text if ch not in "<>\n\r\0")


def _first_line(message: str) -> str:
    return message.split("\n", 1)[0]


def git_error(args: Iterable[str], proc: subprocess.CompletedProcess[bytes]) -> TaskfsError:
    args = tuple(args)
    reason = proc.stderr.decode("utf-8", "replace").strip() or f"exit status {proc.returncode}"
    return fail("git_failed", command=args[0] if args else "", reason=reason)
