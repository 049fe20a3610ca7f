"""A task's evidence files as the completion gate reads them (`taskfs.core.evidence.Gate`),
from what was read of them before (`taskfs.readmodel.gate`) when their bytes and the runner
trust are the same, else read whole (`task_reader.load_evidence`: the models) and kept."""

from __future__ import annotations

import hashlib
import os

from taskfs.core.evidence import Gate, GateFacts, RunnerTrust
from taskfs.core.layout import EVIDENCE
from taskfs.readmodel import gate as cache
from taskfs.store.repository import Repository

# An entry as read now: the digest None when it is not to be kept.
Read = tuple["bytes | None", object, "tuple[object, ...] | None", "str | None"]


def gates(repo: Repository, task_id: str, trust: RunnerTrust) -> list[Gate]:
    """The task's readable evidence files in name (time) order, as the gate reads them: each
    from what was kept of it when its bytes and the trust are the same, else read whole (and
    kept)."""
    folder = repo.task_dir(task_id) / EVIDENCE
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []
    trusted = (trust.source, tuple(sorted(trust.keys.items())))
    stored = cache.read(str(repo.git_dir), task_id)
    kept: dict[str, cache.Entry] = {}
    out: list[Gate] = []
    for name in names:
        digest = _digest(folder / name)
        found = stored.get(name)
        entry: Read
        if found is not None and found[0] == digest and found[1] == trusted:
            entry = found
        else:
            entry = _read_whole(repo, task_id, name, trust, digest=digest, trusted=trusted)
        if entry[0] is not None:  # its bytes read twice the same: kept
            kept[name] = entry  # type: ignore[assignment]
        if entry[2] is not None and entry[3] is not None:
            rel = repo.task_rel(task_id, EVIDENCE, name)
            out.append(Gate(rel, GateFacts(*entry[2]), entry[3]))  # type: ignore[arg-type]
    if kept != stored:
        cache.write(str(repo.git_dir), task_id, kept)
    return out


def _read_whole(
    repo: Repository,
    task_id: str,
    name: str,
    trust: RunnerTrust,
    *,
    digest: bytes | None,
    trusted: object,
) -> Read:
    """One evidence file read whole (the models): its facts, or none for a file that is not
    readable evidence, as the gate decides on them now. Its digest is None (it is not to be
    kept) when its bytes changed while it was read, or could not be read."""
    from taskfs.errors import TaskfsError
    from taskfs.store.task_reader import load_evidence_file

    try:
        item = load_evidence_file(repo, task_id, name, trust).gate()
    except TaskfsError:
        item = None
    if digest is not None and _digest(repo.task_dir(task_id) / EVIDENCE / name) != digest:
        digest = None
    return (digest, trusted, None if item is None else tuple(item.facts), item and item.signature)


def _digest(path: os.PathLike[str]) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).digest()
    except OSError:
        return None
