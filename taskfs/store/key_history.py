"""The history of agent keys and their revocations (rows `agent-key` and `revocation` of
`taskfs.core.ledger_kinds`), and the one rule a signature in a ledger file is checked by: the
agent key as the commit that added the file held it (`act_keys`, `key_of`). `audit` and every
decision that asks whether an act is its writer's (a claim's dependencies, an amendment in
force) read keys through here, so a key made after an act does not void it and a key revoked
after a forgery does not make it genuine.

An agent key is never edited; it leaves the tree only by its revocation: a record naming that
very key, added by the commit that removes it, written by the key's owner (signed with the key
it revokes) or by the operator (signed when it has a key of its own), and authored as its
`by`. Such a revocation is noted (`agent_key_revoked`). Any other removal is a finding
(`agent_key_changed`), and the key it took out stands still (`Standing.ghosts`): what is written
in its owner's name afterwards is checked against it, so that removing a key by hand, or by a
revocation nobody could make, never lets anyone write unsigned in the owner's name. A key
added for a name whose key stands so is a finding too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from taskfs.core import act_signing, signing
from taskfs.core.layout import KEYS_DIR
from taskfs.core.ledger_kinds import OPERATOR, may_revoke
from taskfs.errors import Problem, problem
from taskfs.store import keys
from taskfs.store.git.history import Author
from taskfs.store.git.objects import Identity, ObjectSource
from taskfs.store.keypaths import REVOKED_DIR
from taskfs.store.keys import KeysAt
from taskfs.store.repository import Repository

AGENT_KEYS = f"{KEYS_DIR}/agent"


@dataclass
class Standing:
    """What the history of agent keys says: its findings, its notes, and every key taken out by
    a removal that was no revocation (name -> [(commit, key)], newest first)."""

    findings: list[Problem] = field(default_factory=list)
    notes: list[Problem] = field(default_factory=list)
    ghosts: dict[str, list[tuple[str, bytes]]] = field(default_factory=dict)


def agent_keys(
    repo: Repository,
    history: list[tuple[str, str, str, str]],
    reader: ObjectSource,
    is_ancestor: Callable[[str, str], bool],
) -> Standing:
    """Replay the history of agent keys (`history`: `path_history` of the keys' folder,
    newest first), oldest first."""
    out = Standing()
    records = repo.git.path_history(REVOKED_DIR)
    added = {(commit, path) for commit, _a, status, path in records if status == "A"}
    authors = repo.git.file_additions([REVOKED_DIR]) if added else {}
    for commit, author, status, path in reversed(history):
        name = path.rsplit("/", 1)[-1].removesuffix(".pub")
        if status == "A":
            if any(
                removed == commit or is_ancestor(removed, commit)
                for removed, _key in out.ghosts.get(name, ())
            ):
                why = "added while the key it replaces still stands (its removal was no revocation)"
                out.findings.append(_changed(path, commit, why))
            continue
        if status != "D":
            continue  # an edit: the table's history pass names it (history_audit)
        before = _key_before(reader, commit, path)
        found = _revocation(reader, commit, path, before, added=added, authors=authors)
        if isinstance(found, Problem):
            out.notes.append(found)
            continue
        why = f"deleted by {author!r}" + (f" with {found}" if found else ", with no revocation")
        out.findings.append(_changed(path, commit, why))
        if before is not None:
            out.ghosts.setdefault(name, []).insert(0, (commit, before))
    return out


def _changed(path: str, commit: str, change: str) -> Problem:
    shown = commit[:12] if len(commit) == 40 else commit
    return problem("agent_key_changed", path=path, commit=shown, change=change, rule=_rule(path))


def _rule(path: str) -> str:
    return "revocation" if path.startswith(REVOKED_DIR) else "agent-key"


def _key_before(reader: ObjectSource, commit: str, path: str) -> bytes | None:
    return _key_in(reader, f"{commit}^:{path}")


def _key_in(reader: ObjectSource, spec: str) -> bytes | None:
    """The public key in the object `spec` (`REV:PATH`); None when there is none to read."""
    found = reader.read(spec)
    if found is None:
        return None
    try:
        return keys.parse_public(found[1].decode("utf-8").strip())
    except (UnicodeDecodeError, signing.SigningError):
        return None


def _revocation(
    reader: ObjectSource,
    commit: str,
    path: str,
    before: bytes | None,
    *,
    added: set[tuple[str, str]],
    authors: dict[str, Author],
) -> Problem | str | None:
    """`agent_key_revoked` when `commit` removed the key at `path` by a revocation that holds
    (`ledger_kinds.may_revoke`, authored as its `by`, signed as its `by`'s acts are); else why
    the revocation it came with does not hold (None: it came with none)."""
    name = path.rsplit("/", 1)[-1].removesuffix(".pub")
    if before is None:
        return None
    ident = signing.key_id(before)
    record = keys.revoked_rel(name, ident)
    found = reader.read(f"{commit}:{record}") if (commit, record) in added else None
    if found is None:
        return None
    from taskfs.core import yamlio  # only where a revocation is read: a writer's check has none

    try:
        value = yamlio.load(found[1])
    except yamlio.YamlError:
        return f"revocation {record}, which is no revocation file"
    if not isinstance(value, dict) or value.get("keyId") != ident or value.get("name") != name:
        return f"revocation {record}, which names another key"
    by = str(value.get("by", "?"))
    refused = may_revoke(name, by)
    author = authors.get(record)
    expected = Identity.agent(by)
    signer = before if by == name else _key_at(reader, f"{commit}^", OPERATOR)
    if refused is not None:
        return f"revocation {record} by {by!r}: {refused}"
    if author is not None and (author.name, author.email) != (expected.name, expected.email):
        return f"revocation {record}, which says {by!r} made it, authored by {author.name!r}"
    if signer is not None and not act_signing.verifies("revocation", value, signer):
        return f"revocation {record} in {by}'s name, which {by}'s key did not sign"
    why = f" ({value['reason']})" if isinstance(value.get("reason"), str) else ""
    return problem(
        "agent_key_revoked",
        name=name,
        key_id=ident,
        commit=commit[:12],
        by=by,
        why_text=why,
        path=path,
        rule="revocation",
    )


def _key_at(reader: ObjectSource, rev: str, name: str) -> bytes | None:
    return _key_in(reader, f"{rev}:{keys.public_rel('agent', name)}")


KeyOf = Callable[[str, str], "bytes | None"]


def keys_at(
    repo: Repository,
    reader: ObjectSource,
    is_ancestor: Callable[[str, str], bool],
    history: list[tuple[str, str, str, str]],
    ghosts: Mapping[str, list[tuple[str, bytes]]],
) -> KeysAt:
    """Agent keys as each commit held them (`history`: `path_history` of the keys' folder;
    `ghosts`: `agent_keys(...).ghosts`, the keys removed by no revocation, which stand still)."""
    return KeysAt(reader, "agent", _names(repo, history), ghosts=ghosts, is_ancestor=is_ancestor)


def _names(repo: Repository, history: list[tuple[str, str, str, str]]) -> set[str]:
    """The names that ever had an agent key: in the keys' folder's `history`, or now."""
    names = {path.rsplit("/", 1)[-1].removesuffix(".pub") for *_rest, path in history}
    return names | set(keys.public_keys(repo.root, "agent"))


def key_of(added: Mapping[str, Author], at: KeysAt, rel: str, name: str) -> bytes | None:
    """The key bytes a signature in ledger file `rel` by agent `name` is verified against: the
    agent key as the commit that added `rel` (`added`) held it; HEAD's for a file not committed
    yet."""
    author = added.get(rel)
    return at.key(author.commit if author else "HEAD", name)


# Past this many tasks, the commits that added their files are found by one `git log` of the
# whole tasks folder rather than one naming each task's folder.
WHOLE_AT = 64


def reading(task_ids: Collection[str]) -> Collection[str] | None:
    """What `act_keys` is asked for when `task_ids` are read together: those tasks, or (past
    `WHOLE_AT`) every task, whose files one `git log` of the tasks folder names."""
    return task_ids if len(task_ids) <= WHOLE_AT else None


_HISTORY: dict[tuple[str, str | None], list[tuple[str, str, str, str]]] = {}


def _history(repo: Repository) -> list[tuple[str, str, str, str]]:
    """`path_history` of the agent keys' folder, asked once per HEAD in a process (loading a
    ledger of many amended tasks asks it of each)."""
    where = (os.fspath(repo.root), repo.git.head_guess())
    if where not in _HISTORY:
        _HISTORY.clear()
        _HISTORY[where] = repo.git.path_history(AGENT_KEYS)
    return _HISTORY[where]


@contextmanager
def act_keys(repo: Repository, task_ids: Collection[str] | None) -> Iterator[KeyOf]:
    """`key_of` for a decision about the files of the tasks `task_ids` (None: of every task, as
    a read of the whole ledger asks: the commits that added its files are then found by one
    `git log` of the tasks folder). A repository where no agent ever had a key answers None for
    every file after one `git log` of the keys' folder; the rest (git's objects, the commits
    that added the files) is read when a file by an agent that had a key is first asked of."""
    history = _history(repo)
    if not history and not keys.public_keys(repo.root, "agent"):
        yield lambda _rel, _name: None
        return
    with ExitStack() as stack:
        known: list[tuple[KeysAt, dict[str, Author]]] = []

        def opened() -> tuple[KeysAt, dict[str, Author]]:
            if not known:
                reader = stack.enter_context(repo.git.reader())
                ghosts = agent_keys(repo, history, reader, repo.git.is_ancestor).ghosts
                at = keys_at(repo, reader, repo.git.is_ancestor, history, ghosts)
                if task_ids is None:
                    folders = [repo.tasks_rel]
                else:
                    folders = [repo.task_rel(task_id) for task_id in sorted(task_ids)]
                known.append((at, repo.git.file_additions(folders) if folders else {}))
            return known[0]

        names = _names(repo, history)

        def lookup(rel: str, name: str) -> bytes | None:
            if name not in names:
                return None  # no key ever stood for it: nothing to read
            at, added = opened()
            return key_of(added, at, rel, name)

        yield lookup
