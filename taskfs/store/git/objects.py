"""Git objects: blobs, trees and commits, read through one `git cat-file` and written as
loose objects (the ledger's write path).

Ledger commits are built without touching the user's staged work: the new files' blobs, the
trees along their paths and the commit are written as loose objects (the format is git's
documented object format), `HEAD` is moved with `git update-ref NEW OLD` (a compare-and-swap,
so a concurrent commit is never overwritten), and the new paths are added to the index so that
the user's `git status` stays clean. `git commit -- PATHS` would do the same but costs three
times a plain commit in a 5,000-task repository, and would run the user's commit hooks.
Nothing here imports GitPython: every ledger write (claim, new, move) goes through here.
"""

from __future__ import annotations

import os
import threading
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import cached_property
from typing import Any, NamedTuple, Protocol

from taskfs.errors import TaskfsError, fail
from taskfs.store.git import packs, staging
from taskfs.store.git.process import Process, git_error, nul_list
from taskfs.store.git.reader import ObjectReader, tree_entries

# A tree edit: a file's new content, None to remove it, or the edits of a subtree.
Nested = dict[str, "bytes | Stored | Nested | None"]
FILE_MODE = "100644"
TREE_MODE = "40000"


class Stored(NamedTuple):
    """A file's blob that git already wrote (through the file's clean filter): taken as is."""

    oid: str


class Identity(NamedTuple):
    name: str
    email: str

    @classmethod
    def agent(cls, agent: str) -> Identity:
        return cls(agent, f"{agent}@taskfs")


class ObjectSource(Protocol):
    """What readers of the ledger at a commit need: objects by name (`COMMIT:PATH` too).
    `ObjectReader` (the write path's) and the history session's reader both are one."""

    def read(self, name: str) -> tuple[str, bytes] | None: ...

    def tree(self, oid: str) -> Iterator[tuple[str, tuple[str, str]]]: ...

    def tree_at(self, revision_path: str) -> list[tuple[str, tuple[str, str]]]: ...


class Objects(Process):
    """Reading and writing git objects, and the ledger commits built from them."""

    # (thread, reader) while `one_reader` holds a block open: that thread's reads share it.
    _shared: tuple[int, ObjectReader] | None = None

    @contextmanager
    def reader(self) -> Iterator[ObjectReader]:
        shared = self._shared
        if shared is not None and shared[0] == threading.get_ident():
            yield shared[1]
            return
        reader = ObjectReader(self)
        try:
            yield reader
        finally:
            reader.close()

    @contextmanager
    def one_reader(self) -> Iterator[None]:
        """Every read of this thread in the block through one `git cat-file --batch`, where
        each `reader` would start its own: a command that reads HEAD's objects several times
        (a check: loose files before and after the run, the runner keys) starts git once.
        Each request names its object afresh, so a commit made in the block is seen; another
        thread (the commit built beside `git add`) still starts its own."""
        if self._shared is not None:
            yield
            return
        with self.reader() as reader:
            self._shared = (threading.get_ident(), reader)
            try:
                yield
            finally:
                self._shared = None

    def tree_id(self, rev: str, folder: str) -> str | None:
        """The tree `folder` has in commit `rev`, or None when it has none."""
        proc = self.run_raw("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}:{folder}")
        return proc.stdout.decode().strip() or None

    def folder_names(self, rev: str, folder: str) -> set[str]:
        """The names of the entries directly in `folder` as commit `rev` holds it."""
        out = self.run_raw(
            "ls-tree", "-z", "--name-only", rev, "--", folder.rstrip("/") + "/",
            env={"GIT_LITERAL_PATHSPECS": "1"},
        )  # fmt: skip
        if out.returncode != 0:
            raise git_error(("ls-tree",), out)
        prefix = folder.rstrip("/") + "/"
        return {name[len(prefix) :] for name in nul_list(out.stdout) if name.startswith(prefix)}

    def tree_paths(self, rev: str, below: Sequence[str]) -> list[str]:
        """The files at or below the literal paths `below` in commit `rev`."""
        if not below:
            return []
        out = self.run_raw(
            "ls-tree", "-r", "-z", "--name-only", rev, "--", *below,
            env={"GIT_LITERAL_PATHSPECS": "1"},
        )  # fmt: skip
        if out.returncode != 0:
            raise git_error(("ls-tree",), out)
        return nul_list(out.stdout)

    def tree_blobs(self, tree: str) -> dict[str, str]:
        """Path (relative to `tree`) to blob id, for every file below a tree."""
        out = self.run_raw("ls-tree", "-r", "-z", "--full-tree", tree)
        if out.returncode != 0:
            raise git_error(("ls-tree",), out)
        blobs: dict[str, str] = {}
        for row in nul_list(out.stdout):
            info, _tab, path = row.partition("\t")
            _mode, kind, oid = info.split()
            if kind == "blob":
                blobs[path] = oid
        return blobs

    def read_blobs(self, wanted: Sequence[tuple[str, str]]) -> list[bytes | None]:
        """The bytes of each (commit, path) as that commit holds it (None when it holds none),
        through one `git cat-file` process."""
        out: list[bytes | None] = []
        with self.reader() as reader:
            for commit, path in wanted:
                found = reader.read(f"{commit}:{path}")
                out.append(found[1] if found and found[0] == "blob" else None)
        return out

    def commit_files(
        self,
        paths: Sequence[str],
        message: str,
        author: Identity,
        *,
        when: datetime | None = None,
        removed: Sequence[str] = (),
        retired: Sequence[str] = (),
        contents: Mapping[str, bytes] | None = None,
        place: Callable[[], object] | None = None,
    ) -> str:
        """Commit the working-tree content of `paths` (repository-relative) onto HEAD, and the
        removal of `removed` (files the change consumed) and of the folders `retired` whole
        (tasks the archive takes out); the caller deletes them afterwards. `contents`: the
        bytes of those of `paths` the caller is writing, which `place` (called once, before
        git reads them) puts in the working tree; the others are read from it.

        Only these paths change, relative to HEAD; the user's other staged or unstaged work
        stays as it was. Returns the new commit id. Raises `TaskfsError` (git_failed) when HEAD
        moved under us too often, which only concurrent non-taskfs commits can cause.
        """
        given = contents or {}
        raw = {p: given[p] if p in given else (self.root / p).read_bytes() for p in paths}
        # The blob `git add` stores is the file through its clean conversion (.gitattributes),
        # if one applies: nearly always the raw bytes' blob, on which the commit is built;
        # where it may not be, the commit takes the blob the index holds (`staging`).
        oids = {
            p: self._hash(b"blob %d\0" % len(data) + data).hexdigest() for p, data in raw.items()
        }
        # While git adds the files (it rewrites its whole index: most of a commit's time in a
        # large repository), or while they are written (many: their blobs must be stored
        # before git reads them), a second thread builds the commit on the raw bytes' blobs.
        guess: dict[str, bytes | Stored | None] = {p: Stored(oid) for p, oid in oids.items()}
        guess.update(dict.fromkeys([*removed, *retired]))
        bulk = staging.many(paths)
        blobs = {oids[p]: ("blob", data) for p, data in raw.items()} if bulk else {}
        early = staging.EarlyCommit(self, guess, (message, author, when), blobs)
        loose = None if bulk else staging.Loose(self, oids)  # before anything is written
        if (paths or retired) and not self.signs_commits:  # a signer may ask: never early
            early.start()
        if loose is None:
            unsure = staging.stage_many(self, paths, raw, place, early)
        else:
            try:
                if place is not None:
                    place()
                if paths:
                    staging.add_to_index(self, paths)
            finally:
                early.join()
            unsure = loose.unsure()
        built = early.made
        stored: dict[str, bytes | Stored | None] = dict(raw)
        stored.update({p: Stored(oid) for p, oid in staging.index_blobs(self, unsure).items()})
        stored.update(dict.fromkeys([*removed, *retired]))
        if removed:
            args = ("update-index", "--force-remove", "--", *removed)
            proc = self.run_index(*args)
            if proc.returncode != 0:
                raise git_error(args, proc)
        if retired:
            staging.unstage(self, retired)
            # git's index keeps a cache of the trees it holds, in which every folder taken out
            # stays as a stale node: rewritten without them, or each later `git add` rewrites
            # an index half again as large. Only the trees' objects are written (unreferenced,
            # as git's own would be), and a failure (a merge in progress) changes nothing.
            self.run_index("write-tree")
        try:
            return self._commit_onto_head(
                stored, message, author, when, built=None if unsure else built
            )
        except TaskfsError:
            # Nothing was committed (signing failed, say): the index goes back to HEAD's for
            # these paths, so no half-made change stays staged.
            self.run_index(
                "reset", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
                input=staging.nul_joined([*paths, *removed, *retired]),
                env={"GIT_LITERAL_PATHSPECS": "1"},
            )  # fmt: skip
            raise

    def _commit_onto_head(
        self,
        contents: dict[str, bytes | Stored | None],
        message: str,
        author: Identity,
        when: datetime | None,
        *,
        built: tuple[str | None, str] | None = None,
    ) -> str:
        """Commit `contents` onto HEAD and move HEAD there, building again on whatever moved
        HEAD meanwhile; `built`: a commit of the same contents already made on a parent, used
        when that parent is HEAD's."""
        parent = built[0] if built is not None else self.head_guess()
        while True:
            if built is not None and built[0] == parent:
                commit = built[1]
            else:
                commit = self.build_commit(parent, contents, message, author, when)
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

    def build_commit(
        self,
        parent: str | None,
        contents: dict[str, bytes | Stored | None],
        message: str,
        author: Identity,
        when: datetime | None,
        *,
        blobs: Mapping[str, tuple[str, bytes]] | None = None,
    ) -> str:
        """The commit of `contents` on `parent` (its objects written, no ref moved), `blobs`
        (object id -> kind and body) written with them."""
        new: dict[str, tuple[str, bytes]] = dict(blobs or {})  # written together
        with self.reader() as reader:
            base_tree = reader.commit_tree(parent) if parent else None
            tree = self._write_tree(reader, base_tree, _nest(contents), new)
        self.store_objects(new)
        return self.write_commit(tree, (parent,) if parent else (), message, author, when)

    def _write_tree(
        self, reader: ObjectReader, base: str | None, changes: Nested, new: dict[str, Any]
    ) -> str:
        """The tree `base` with `changes` applied (the empty tree when nothing is left), its
        objects added to `new` (by id: kind and body) for the caller to write.

        The base's entries are kept as the bytes git wrote: a tasks folder of thousands of
        tasks is re-joined, not re-encoded, when one task's entry changes."""
        size = self._hash().digest_size
        entries = tree_entries(reader.tree_body(base) or b"", size) if base else {}
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
                mode, oid = FILE_MODE, packs.put(new, self._hash, "blob", change)
            else:
                sub_base = old[-size:].hex() if old and old_mode == TREE_MODE else None
                mode, oid = TREE_MODE, self._write_tree(reader, sub_base, change, new)
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
        return packs.put(new, self._hash, "tree", body)

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
    def _settings(self) -> dict[str, str | None]:
        """The user's git settings a ledger commit follows, read once (one process): the last
        value of each, by lower-case name (None: set without a value, which a boolean reads
        as true)."""
        pattern = (
            r"^(commit\.gpgsign|core\.fsync|core\.fsyncobjectfiles|core\.(loose)?compression)$"
        )
        proc = self.run_raw("config", "-z", "--get-regexp", pattern)
        found: dict[str, str | None] = {}
        for item in proc.stdout.split(b"\0") if proc.returncode == 0 else ():
            if item:
                name, newline, value = item.decode("utf-8", "replace").partition("\n")
                found[name.lower()] = value if newline else None
        return found

    @property
    def signs_commits(self) -> bool:
        """Whether the user's git signs commits (`commit.gpgSign`): branch protection may
        refuse ledger commits that are not signed."""
        return "commit.gpgsign" in self._settings and _true(self._settings["commit.gpgsign"])

    @property
    def hardens_loose_objects(self) -> bool:
        """Whether the user's git flushes the loose objects it writes to disk before going on
        (`core.fsync` naming them, or the older `core.fsyncObjectFiles`). Git's default does
        not: a commit is not flushed, and neither are the ledger files that become its
        objects (`taskfs.store.writer`), so the ledger is exactly as durable as the history
        it is kept in. A user who asks git for more gets it for both."""
        settings = self._settings
        legacy = "core.fsyncobjectfiles" in settings and _true(settings["core.fsyncobjectfiles"])
        return _fsyncs_loose_objects(settings.get("core.fsync"), legacy)

    @property
    def loose_compression(self) -> int:
        """The zlib level git writes loose objects at: `core.looseCompression`, else
        `core.compression`, else 1 (best speed), git's default. A level git would refuse is
        left to git to name; the objects written here take git's default."""
        for name in ("core.loosecompression", "core.compression"):
            if name in self._settings:
                try:
                    level = int(self._settings[name] or "", 0)
                except ValueError:
                    return 1
                return level if -1 <= level <= 9 else 1
        return 1

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

    def store_objects(self, objects: Mapping[str, tuple[str, bytes]]) -> None:
        """Write `objects` (object id -> kind and body): loose, or as one pack when there are
        many (`packs`): two files, not thousands."""
        packs.write_all(self.common_dir / "objects", objects, self._hash, self.write_object,
                        self.hardens_loose_objects)  # fmt: skip

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
        tmp.write_bytes(zlib.compress(data, self.loose_compression))
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)
        return oid

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
                made: dict[str, tuple[str, bytes]] = {}
                new_tree = self._write_tree(reader, tree, _nest(changes), made) if changes else tree
                self.store_objects(made)
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

    def move_head(self, new: str, old: str | None, message: str) -> bool:
        """Point HEAD at `new` if it still points at `old` (a compare-and-swap)."""
        proc = self.run_raw("update-ref", "-m", message, "HEAD", new, old or self.zero)
        return proc.returncode == 0


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


def _true(value: str | None) -> bool:
    """A git boolean: set without a value, `true`, `yes`, `on` or a non-zero number."""
    if value is None:
        return True
    text = value.strip().lower()
    if text in ("true", "yes", "on"):
        return True
    try:
        return int(text, 0) != 0
    except ValueError:
        return False


# The `core.fsync` components that cover loose objects (git's config documentation).
_LOOSE = frozenset({"loose-object", "objects", "committed", "added", "all"})


def _fsyncs_loose_objects(components: str | None, legacy: bool) -> bool:
    """Whether `core.fsync` (None: unset) makes git flush loose objects, as git 2.39 reads it
    (checked against git itself, tests/store/test_git_config.py): its default set leaves them
    out, a component named puts them in even when another takes them out (`all,-loose-object`
    still flushes them), and `core.fsyncObjectFiles` set true flushes them whatever the rest."""
    named = {token.strip().lower() for token in (components or "").split(",")}
    return legacy or bool(named & _LOOSE)
