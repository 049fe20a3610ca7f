"""One commit's tree of the tasks folder seen as a read-only `Repository`, loaded at once.

The readers of `taskfs.store.task_reader` then read tasks from it as from a working tree.
(`taskfs.store.commit_chains` reads only status chains, one task at a time, lazily.)

For rules that judge a commit by the ledger of its own time: the CI form of the ownership
guard checks each commit of a range against the tasks that were open in that commit.
"""

from __future__ import annotations

from taskfs.core import layout
from taskfs.core.layout import AMENDMENTS, ENVELOPE, INTAKE, MESSAGES, STATUS
from taskfs.store.repository import Repository


class CommitView(Repository):
    """A `Repository` whose ledger files come from one tree of the tasks folder. For reading
    only: nothing may be written through it."""

    def __init__(self, repo: Repository, files: dict[str, bytes]) -> None:
        super().__init__(repo.root, repo.tasks_rel, repo.config)
        self._files = files  # repository-relative path -> content
        self._dirs: dict[tuple[str, str], list[str]] = {}
        self._ids: set[str] = set()
        for rel in files:
            parts = rel[len(self.tasks_rel) + 1 :].split("/")
            if len(parts) == 2 and parts[1] == ENVELOPE:
                self._ids.add(parts[0])
            elif len(parts) == 3:  # status/, intake/, and evidence/ or messages/ when read
                self._dirs.setdefault((parts[0], parts[1]), []).append(parts[2])

    @classmethod
    def load(cls, repo: Repository, tree: str | None) -> CommitView:
        """The ledger in `tree` (the tasks folder's tree id; None for no ledger at all).
        Only envelopes, status files, amendments and intakes' files are read: they decide
        which tasks are open and what they own."""
        files: dict[str, bytes] = {}
        if tree is not None:
            wanted = {
                path: oid for path, oid in repo.git.tree_blobs(tree).items() if _is_state_file(path)
            }
            with repo.git.reader() as reader:
                for path, oid in wanted.items():
                    found = reader.read(oid)
                    if found is not None:
                        files[f"{repo.tasks_rel}/{path}"] = found[1]
        return cls(repo, files)

    def task_ids(self) -> list[str]:
        return sorted(i for i in self._ids if layout.is_task_id(i))

    def has_task(self, task_id: str) -> bool:
        return task_id in self._ids and layout.is_task_id(task_id)

    def read_bytes(self, rel: str) -> bytes:
        try:
            return self._files[rel]
        except KeyError:
            raise FileNotFoundError(2, "not in this commit", rel) from None

    def entries(self, task_id: str, kind: str) -> list[str]:
        return sorted(n for n in self._dirs.get((task_id, kind), []) if not n.startswith("."))

    def list_dir(self, task_id: str, kind: str) -> list[str]:
        names = self._dirs.get((task_id, kind), [])
        return sorted(n for n in names if n.endswith(".yaml") and not n.startswith("."))


def _is_state_file(path: str) -> bool:
    parts = path.split("/")
    return (len(parts) == 2 and parts[1] == ENVELOPE) or (
        len(parts) == 3 and parts[1] in (STATUS, INTAKE, AMENDMENTS, MESSAGES)
    )
