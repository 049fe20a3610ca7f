"""The working tree and the index: what is uncommitted, staged or in the way, and moving them.

The ownership guard asks what the next commit would change (`staged_paths`); decisions that
rest on HEAD ask what no commit holds (`not_at_head`: taskfs.store.head_ledger); `sync` moves the
index and working tree to a merged commit as `git checkout` would (`switch_tree`).
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from taskfs.store.git.history import History
from taskfs.store.git.objects import Identity, Objects
from taskfs.store.git.process import git_error, nul_list
from taskfs.store.git.reader import ObjectReader, parse_tree

_W = TypeVar("_W", bound="Worktree")


class Worktree(Objects, History):
    """The working tree and the index of a checkout."""

    def worktree_files(self, below: Sequence[str] = ()) -> list[str]:
        """Every tracked file and every untracked file git does not ignore, as paths relative
        to the working tree (tracked files deleted from the tree included), sorted, once each;
        only those at or below the literal paths `below` when it names any."""
        return sorted(self.worktree_files_tracked(below))

    def worktree_files_tracked(self, below: Sequence[str] = ()) -> dict[str, bool]:
        """`worktree_files`, each with whether the index holds it (False: untracked)."""
        spec = ("--", *below) if below else ()
        out = self.run_raw(
            "ls-files",
            "-z",
            "-t",
            "--cached",
            "--others",
            "--exclude-standard",
            *spec,
            env={"GIT_LITERAL_PATHSPECS": "1"} if below else None,
        )
        if out.returncode != 0:
            raise git_error(("ls-files",), out)
        found: dict[str, bool] = {}
        for entry in out.stdout.decode("utf-8", "surrogateescape").split("\0"):
            if len(entry) > 2:  # "<tag> <path>": `?` for an untracked file
                found[entry[2:]] = found.get(entry[2:], False) or entry[0] != "?"
        return found

    def add_worktree(self: _W, path: Path, commit: str) -> _W:
        """A detached checkout of `commit` at `path` (new or empty); remove it with
        `remove_worktree`."""
        self.run("worktree", "add", "--detach", "--quiet", str(path), commit)
        return type(self)(path)

    def remove_worktree(self, path: Path) -> None:
        """Remove a worktree made by `add_worktree`, whatever state it was left in."""
        self.run_raw("worktree", "remove", "--force", "--force", str(path))
        if path.exists():
            # The check left something git would not delete (a read-only folder, say).
            shutil.rmtree(path, ignore_errors=True)
        self.run_raw("worktree", "prune")

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
        return nul_list(out.stdout)

    def merge_heads(self) -> list[str]:
        """The commits being merged in, while a merge waits to be committed."""
        try:
            text = (self.git_dir / "MERGE_HEAD").read_text(encoding="ascii", errors="replace")
        except OSError:
            return []
        return [line.strip() for line in text.splitlines() if line.strip()]

    def unmerged_paths(self, folder: str) -> list[str]:
        out = self.run_raw("ls-files", "--unmerged", "-z", "--", folder or ".").stdout
        paths = {
            e.split("\t", 1)[1]
            for e in out.decode("utf-8", "surrogateescape").split("\0")
            if "\t" in e
        }
        return sorted(paths)

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
            found += [("changed", p) for p in nul_list(listed.stdout)]
        else:
            diff = self.run_raw(
                "diff", "HEAD", "--name-only", "-z", "--no-renames", "--no-ext-diff",
                "--", *pathspecs, env=env,
            )  # fmt: skip
            if diff.returncode != 0:
                raise git_error(("diff",), diff)
            found += [("changed", p) for p in nul_list(diff.stdout)]
        other = self.run_raw("ls-files", "-z", "--others", "--", *pathspecs, env=env)
        if other.returncode != 0:
            raise git_error(("ls-files",), other)
        found += [("untracked", p) for p in nul_list(other.stdout)]
        return found

    def as_at_head(self, folders: Sequence[str]) -> bool:
        """Whether every file below each of `folders` (a few small ones: each file is read)
        holds, byte for byte, the blob HEAD holds at its path, and HEAD holds no other file
        there: then none is `not_at_head`, found with one `git cat-file` and no read of git's
        index. False when unsure (a link, a special file, an executable bit, bytes git would
        convert on the way in): `not_at_head` decides then. The index is not consulted: a
        change staged and then undone in the working tree leaves the folder as HEAD holds
        it, which is what a reader of the ledger reads."""
        try:
            with self.reader() as reader:
                for folder in folders:
                    held = _tree_files(reader, f"HEAD:{folder}")
                    if held is None or _files_below(self.root / folder, self._hash) != held:
                        return False
        except (OSError, ValueError):
            return False
        return True

    def head_entries(self, below: Sequence[str]) -> dict[str, tuple[str, str]]:
        """{path: (mode, blob id)} of every file HEAD holds at or below the literal paths
        `below` (all of HEAD when it names none), read from HEAD's trees alone: no read of
        git's index, whose size grows with the whole working tree."""
        if self.head_guess() is None:
            return {}
        spec = ("--", *below) if below else ()
        env = {"GIT_LITERAL_PATHSPECS": "1"} if below else None
        listed = self.run_raw("ls-tree", "-r", "-z", "--full-tree", "HEAD", *spec, env=env)
        if listed.returncode != 0:
            raise git_error(("ls-tree",), listed)
        out: dict[str, tuple[str, str]] = {}
        for line in nul_list(listed.stdout):
            meta, _tab, path = line.partition("\t")
            mode, kind, oid = meta.split(" ")
            if kind == "blob":
                out[path] = (mode, oid)
        return out

    def blob_id(self, data: bytes) -> str:
        """The id git gives a blob of `data` (its object format's hash)."""
        return self._hash(b"blob %d\0" % len(data) + data).hexdigest()

    def changed_since_head(self, paths: Sequence[str]) -> list[str]:
        """Those of `paths` whose working-tree content HEAD does not hold, as `git diff HEAD`
        says (clean filters and line endings included)."""
        if not paths:
            return []
        diff = self.run_raw(
            "diff", "HEAD", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--", *paths,
            env={"GIT_LITERAL_PATHSPECS": "1"},
        )  # fmt: skip
        if diff.returncode != 0:
            raise git_error(("diff",), diff)
        return nul_list(diff.stdout)

    def head_files(self, pathspecs: Sequence[str], rev: str = "HEAD") -> dict[str, bytes]:
        """The bytes HEAD (or the commit `rev`) holds of every file under `pathspecs`, by
        repository-relative path."""
        if not pathspecs or (rev == "HEAD" and self.head_guess() is None):
            return {}
        env = {"GIT_LITERAL_PATHSPECS": "1"}
        listed = self.run_raw("ls-tree", "-r", "-z", "--full-tree", rev, "--", *pathspecs, env=env)
        if listed.returncode != 0:
            raise git_error(("ls-tree",), listed)
        wanted: list[tuple[str, str]] = []
        for line in nul_list(listed.stdout):
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


_FILE, _TREE = "100644", "40000"


def _tree_files(reader: ObjectReader, name: str) -> dict[str, str] | None:
    """{path below the tree: blob id} of every file below the tree `name` names ({} when HEAD
    holds nothing there); None when it holds anything but plain files and folders."""
    found = reader.read(name)
    if found is None:
        return {}
    kind, body = found
    if kind != "tree":
        return None
    out: dict[str, str] = {}
    pending = [("", body)]
    size = reader.digest_size
    while pending:
        prefix, tree = pending.pop()
        for entry, (mode, oid) in parse_tree(tree, size):
            if mode == _FILE:
                out[prefix + entry] = oid
            elif mode == _TREE:
                sub = reader.read(oid)
                if sub is None or sub[0] != "tree":
                    return None
                pending.append((f"{prefix}{entry}/", sub[1]))
            else:
                return None  # an executable, a link or a submodule: for git to compare
    return out


def _files_below(folder: Path, hasher: Callable[[bytes], Any]) -> dict[str, str] | None:
    """{path below `folder`: the blob id git would give its bytes as they are} of every file
    below it ({} when there is no such folder); None when anything there is not a plain
    file or folder, or is executable."""
    out: dict[str, str] = {}
    if folder.is_symlink():
        return None
    if not folder.exists():
        return out
    pending = [(str(folder), "")]
    while pending:
        path, prefix = pending.pop()
        with os.scandir(path) as entries:
            for entry in entries:
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(info.st_mode):
                    pending.append((entry.path, f"{prefix}{entry.name}/"))
                elif stat.S_ISREG(info.st_mode) and not info.st_mode & 0o111:
                    with open(entry.path, "rb") as handle:
                        data = handle.read()
                    out[prefix + entry.name] = hasher(b"blob %d\0" % len(data) + data).hexdigest()
                else:
                    return None
    return out
