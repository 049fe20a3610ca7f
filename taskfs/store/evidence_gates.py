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


def gates(repo: Repository, task_id: str, trust: RunnerTrust) -> list[Gate]:
    """The task's readable evidence files in name (time) order, as the gate reads them."""
    folder = repo.task_dir(task_id) / EVIDENCE
    try:
        names = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    except (FileNotFoundError, NotADirectoryError):
        return []
    digests = {name: _digest(folder / name) for name in names}
    trusted = (trust.source, tuple(sorted(trust.keys.items())))
    stored = cache.read(str(repo.git_dir), task_id)
    out: list[Gate] = []
    for name in names:
        entry = stored.get(name)
        if entry is None or entry[0] != digests[name] or entry[1] != trusted:
            return _read_whole(repo, task_id, trust, digests, trusted)
        if entry[2] is not None and entry[3] is not None:
            out.append(Gate(repo.task_rel(task_id, EVIDENCE, name), GateFacts(*entry[2]), entry[3]))  # type: ignore[arg-type]
    return out


def _read_whole(
    repo: Repository,
    task_id: str,
    trust: RunnerTrust,
    digests: dict[str, bytes | None],
    trusted: object,
) -> list[Gate]:
    from taskfs.store.task_reader import load_evidence

    found, _unreadable = load_evidence(repo, task_id, trust)
    out = [item.gate() for item in found]
    by_name = {item.rel.rsplit("/", 1)[-1]: item for item in out}
    folder = repo.task_dir(task_id) / EVIDENCE
    entries: dict[str, cache.Entry] = {}
    for name, digest in digests.items():
        # Kept only when the bytes read now are the bytes hashed before the models read them.
        if digest is None or _digest(folder / name) != digest:
            continue
        item = by_name.get(name)
        facts = None if item is None else tuple(item.facts)
        entries[name] = (digest, trusted, facts, None if item is None else item.signature)
    cache.write(str(repo.git_dir), task_id, entries)
    return out


def _digest(path: os.PathLike[str]) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return hashlib.sha256(handle.read()).digest()
    except OSError:
        return None
