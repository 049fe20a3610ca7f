"""Whether a task's envelope is still the one its submission recorded (`envelope`, the SHA-256 of
the file, on every `submitted` written since issue 35; signed with it where the sender has a
key): a contract edited after it was submitted is one no decision may rest on. A `stat`, two
small reads and a hash: nothing loads YAML or the models."""

from __future__ import annotations

import re

from taskfs.core.layout import ENVELOPE, STATUS
from taskfs.errors import Problem, problem
from taskfs.store.repository import Repository

_DIGEST = re.compile(rb"^envelope: '?(sha256:[0-9a-f]{64})'?[ \t]*\r?$", re.MULTILINE)


def unsealed(repo: Repository, task_id: str) -> Problem | None:
    """`ledger_file_edited` when the task's envelope is not the file its submission recorded;
    None when it is, or when the submission recorded none (written before it was recorded)."""
    from taskfs.core.transition_signing import envelope_digest

    names = [n for n in repo.list_dir(task_id, STATUS) if n.startswith("0001-submitted-")]
    if len(names) != 1:
        return None  # no single submission: the chain's reader names what is wrong
    try:
        status = repo.read_bytes(repo.task_rel(task_id, STATUS, names[0]))
        envelope = repo.read_bytes(repo.task_rel(task_id, ENVELOPE))
    except OSError:
        return None
    found = _DIGEST.search(status)
    if found is None or envelope_digest(envelope) == found.group(1).decode():
        return None
    return problem(
        "ledger_file_edited",
        path=repo.task_rel(task_id, ENVELOPE),
        commit=f"the submission that recorded it ({names[0]})",
        rule="envelope",
    )
