"""A task's evidence files as the completion gate reads them (`taskfs.core.evidence.Gate`),
from what was read of them before (`taskfs.readmodel.gate`, sealed) when their object ids and
the runner trust are the same, else read whole (`task_reader.load_evidence`: the models) and
kept."""

from __future__ import annotations

import os

from taskfs.core.evidence import Gate, GateFacts, RunnerTrust
from taskfs.core.layout import EVIDENCE
from taskfs.readmodel import gate as cache
from taskfs.store.repository import Repository


def gates(repo: Repository, task_id: str, trust: RunnerTrust) -> list[Gate]:
    """The task's readable evidence files in name (time) order, as the gate reads them: each
    from what was kept of it when its bytes and the trust are the same, else read whole (and
    kept when its bytes did not change while it was read)."""
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
        digest = _object_id(repo, folder / name)
        entry = stored.get(name)
        if entry is None or entry[0] != digest or entry[1] != trusted:
            facts, signature = _read_whole(repo, task_id, name, trust)
            unchanged = _object_id(repo, folder / name) == digest  # kept if read twice alike
            entry = (digest, trusted, facts, signature) if digest and unchanged else None
        else:
            facts, signature = entry[2], entry[3]
        if entry is not None:
            kept[name] = entry
        if facts is not None and signature is not None:
            rel = repo.task_rel(task_id, EVIDENCE, name)
            out.append(Gate(rel, GateFacts(*facts), signature))  # type: ignore[arg-type]
    if kept != stored:
        cache.write(str(repo.git_dir), task_id, kept)
    return out


def remember(
    repo: Repository,
    task_id: str,
    name: str,
    data: bytes,
    *,
    facts: GateFacts,
    signature: str,
    trust: RunnerTrust,
) -> None:
    """Keep what the gate reads of an evidence file the caller just wrote as `data` (a check's
    own evidence: it knows the facts without reading the file back through the models)."""
    trusted = (trust.source, tuple(sorted(trust.keys.items())))
    stored = cache.read(str(repo.git_dir), task_id)
    stored[name] = (repo.git.blob_id(data), trusted, tuple(facts), signature)
    cache.write(str(repo.git_dir), task_id, stored)


def _read_whole(
    repo: Repository, task_id: str, name: str, trust: RunnerTrust
) -> tuple[tuple[object, ...] | None, str | None]:
    """One evidence file read whole (the models): its facts and its signature's standing,
    or none for a file that is not readable evidence."""
    from taskfs.errors import TaskfsError
    from taskfs.store.task_reader import load_evidence_file

    try:
        item = load_evidence_file(repo, task_id, name, trust).gate()
    except TaskfsError:
        return None, None
    return tuple(item.facts), item.signature


def _object_id(repo: Repository, path: os.PathLike[str]) -> str | None:
    """The id git gives the file's bytes (what HEAD names it by once it is committed)."""
    try:
        with open(path, "rb") as handle:
            return repo.git.blob_id(handle.read())
    except OSError:
        return None
