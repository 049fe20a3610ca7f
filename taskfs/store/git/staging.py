"""Adding a ledger commit's files to git's index, and learning which blob git stored for each.

A ledger commit is built from the bytes taskfs wrote (`Objects.commit_files`), and its files are
added to the index so that the user's `git status` stays clean. Both must name the same blob:
the blob git stores for a file is its bytes through the file's clean conversion
(`.gitattributes`: a `filter`, `ident`, `working-tree-encoding`, or line endings), which for
nearly every ledger file is the bytes themselves. Where it may not be, the commit takes the
blob the index holds.

How that is learned depends on how many files there are:

- a few (a transition, one new task): `git add` writes each blob loose; a blob it wrote that was
  not there before is the raw bytes' (`Loose`), anything else is read back from the index;
- many (`new` of a thousand envelopes, an import): the raw bytes' blobs are written first, in the
  commit's own pack beside its trees, so that `git update-index` finds each one stored and
  writes no object of its own (thousands of loose files, most of such a commit's time). Which
  paths a conversion may touch is asked of `git check-attr` while the files are written
  (`Conversions`); only bytes with a carriage return can be changed by line endings.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from taskfs.store.git.process import git_error, nul_list

if TYPE_CHECKING:
    from datetime import datetime

    from taskfs.store.git.objects import Identity, Objects, Stored

# Past this many files a commit adds them to git's index by name, its blobs written first.
ADDED_BY_NAME = 32
# The attributes under which git's clean conversion may change a file without a carriage return.
CONVERTING = ("filter", "ident", "working-tree-encoding")
_OFF = frozenset({"unspecified", "unset"})


def many(paths: Sequence[str]) -> bool:
    return len(paths) > ADDED_BY_NAME


def nul_joined(paths: Sequence[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)


def add_to_index(git: Objects, paths: Sequence[str]) -> None:
    """Add `paths` (their working-tree files) to the index, as `git add --force` would."""
    if many(paths):
        # By name, not as pathspecs, which `git add` matches each against every entry of the
        # index. The same blobs: the clean filters apply alike, and ignore rules neither way.
        args: tuple[str, ...] = ("update-index", "--add", "-z", "--stdin")
        proc = git.run_index(*args, input=nul_joined(paths))
    else:
        args = ("add", "--force", "--", *paths)
        proc = git.run_index(*args, env={"GIT_LITERAL_PATHSPECS": "1"})
    if proc.returncode != 0:
        raise git_error(args, proc)


def unstage(git: Objects, folders: Sequence[str]) -> None:
    """Take every file HEAD holds below `folders` out of the index (the working tree is
    left): listed from HEAD's tree, removed by name, so that tens of thousands of folders
    cost one pass, not one pathspec match per file and folder."""
    wanted = set(folders)
    depths = {folder.count("/") + 1 for folder in wanted}
    parents = sorted({folder.rsplit("/", 1)[0] for folder in wanted if "/" in folder})
    listed = git.tree_paths("HEAD", parents) if parents else []
    paths = [p for p in listed if any("/".join(p.split("/")[:d]) in wanted for d in depths)]
    args = ("update-index", "-z", "--force-remove", "--stdin")
    proc = git.run_index(*args, input=nul_joined(paths))
    if proc.returncode != 0:
        raise git_error(args, proc)


def index_blobs(git: Objects, paths: Sequence[str]) -> dict[str, str]:
    """The blob the index holds for each of `paths` (that it holds)."""
    if not paths:
        return {}
    out = git.run_raw("ls-files", "--stage", "-z", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"})
    if out.returncode != 0:
        raise git_error(("ls-files",), out)
    found: dict[str, str] = {}
    for row in nul_list(out.stdout):
        info, _tab, path = row.partition("\t")
        found[path] = info.split()[1]
    return found


class Loose:
    """For a few files: which of their raw bytes' blobs `git add` itself wrote (loose)."""

    def __init__(self, git: Objects, oids: Mapping[str, str]) -> None:
        self._git = git
        self._oids = oids
        self._before = {p for p, oid in oids.items() if self._loose(oid)}

    def _loose(self, oid: str) -> bool:
        return (self._git.common_dir / "objects" / oid[:2] / oid[2:]).exists()

    def unsure(self) -> list[str]:
        """The paths whose blob in the index may not be their raw bytes': git did not write
        that blob now (it was there before, or git wrote another)."""
        return [p for p, oid in self._oids.items() if p in self._before or not self._loose(oid)]


class Conversions:
    """For many files: `git check-attr` of the conversions that may change a file, run in a
    thread of its own from the moment the paths are known (its answer is needed only once the
    index is written)."""

    def __init__(self, git: Objects, paths: Sequence[str]) -> None:
        self._paths = list(paths)
        self._out: list[subprocess.CompletedProcess[bytes]] = []
        self._errors: list[BaseException] = []

        def ask() -> None:
            try:
                args = ("check-attr", "-z", "--stdin", *CONVERTING)
                self._out.append(git.run_raw(*args, input=nul_joined(self._paths)))
            except BaseException as exc:
                self._errors.append(exc)

        self._thread = threading.Thread(target=ask, daemon=True)
        self._thread.start()

    def unsure(self, raw: Mapping[str, bytes]) -> list[str]:
        """The paths whose blob in the index may not be their raw bytes': a conversion
        attribute applies, or the bytes hold a carriage return (line endings may convert)."""
        self._thread.join()
        if self._errors:
            raise self._errors[0]
        proc = self._out[0]
        if proc.returncode != 0:
            raise git_error(("check-attr",), proc)
        fields = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        converted = {fields[i] for i in range(0, len(fields) - 2, 3) if fields[i + 2] not in _OFF}
        return [p for p in self._paths if p in converted or b"\r" in raw[p]]

    def wait(self) -> None:
        """Let the question end (a commit given up): no git process is left behind."""
        self._thread.join()


def stage_many(
    git: Objects,
    paths: Sequence[str],
    raw: Mapping[str, bytes],
    place: Callable[[], object] | None,
    early: EarlyCommit,
) -> list[str]:
    """`commit_files`' staging of many files: their blobs stored first (with the commit
    `early` builds, or on their own), then added to the index, which finds each stored;
    the paths whose blob in the index may not be their raw bytes'."""
    blobs = early.blobs
    asked = Conversions(git, paths)
    try:
        if place is not None:
            place()
        early.join()
        if early.made is None:  # no commit built early: the blobs are stored all the same
            git.store_objects(blobs)
        add_to_index(git, paths)
    finally:
        early.join()
        asked.wait()
    return asked.unsure(raw)


class EarlyCommit:
    """A commit of a change built in a second thread while its files are written and added
    (`Objects.commit_files`), on HEAD as it stands and the raw bytes' blobs; `blobs` (object
    id -> kind and body) are stored with its trees. `made` is (parent, commit), or None when
    it was not started or failed: the caller builds again, meeting the error."""

    def __init__(
        self,
        git: Objects,
        contents: dict[str, bytes | Stored | None],
        about: tuple[str, Identity, datetime | None],
        blobs: Mapping[str, tuple[str, bytes]],
    ) -> None:
        self._git = git
        self._contents = contents
        self._about = about
        self.blobs = blobs
        self.made: tuple[str | None, str] | None = None
        self._thread = threading.Thread(target=self._build, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def join(self) -> None:
        if self._thread.ident is not None:
            self._thread.join()

    def _build(self) -> None:
        message, author, when = self._about
        try:
            parent = self._git.head_guess()
            built = self._git.build_commit(
                parent, self._contents, message, author, when, blobs=self.blobs
            )
        except Exception:  # the caller's own attempt reports it
            return
        self.made = (parent, built)
