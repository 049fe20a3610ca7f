"""What a completion leaves behind that its holder should hear of: warnings, never refusals
(the completion stands; the contract allows it).

- `amendment_lapsed`: an amendment still waited for the holder's answer, and ending the task
  declined it (`taskfs.api.tasks.amend.waiting`).
- `owned_files_untouched`: no commit made since the claim touched the files the task owns, so
  the passing evidence rests on work committed before the claim, or on none (the team day: a
  task completed on a check that passed with nothing done).

Both are asked of every completion (`transitions.transition`): `complete`, `move ID completed`,
MCP's `agent_complete`, the watcher's. They cost nothing in the common case: the row says
whether an amendment waits, and the owned files' history is read back to the claim's time only.
"""

from __future__ import annotations

from taskfs.api.views import commits
from taskfs.core.layout import STATUS, STATUS_NAME_RE, parse_time
from taskfs.core.status_file import written_at
from taskfs.errors import Problem, problem
from taskfs.readmodel.projection import Summary
from taskfs.store.repository import Repository


def left_behind(repo: Repository, task: Summary) -> tuple[Problem, ...]:
    """The warnings of the completion that made `task` (its row as the completion left it)."""
    found: list[Problem] = []
    if task.pending:
        from taskfs.api.tasks.amend import waiting

        found += waiting(repo, task.id, ended=True)
    found += untouched(repo, task)
    return tuple(found)


def untouched(repo: Repository, task: Summary) -> list[Problem]:
    """`owned_files_untouched` when the task owns files and no commit made since its claim
    touched any of them; nothing for a task that owns only interfaces, or whose claim is not
    found. One `git log` that stops at the claim's time: a completion pays for the history
    since its claim only (issue 36: `complete` stays within 1.5x a bare commit)."""
    entries = [
        e for e in task.envelope.files_and_interfaces if not e.startswith(("interface:", "!"))
    ]
    if not entries:
        return []
    claimed = claimed_at(repo, task.id)
    if claimed is None:
        return []
    second = int(parse_time(claimed).timestamp())  # git dates commits in whole seconds
    found = commits.touching(repo, "HEAD", entries, limit=1, since=second)
    if found and found[0].committed > second:
        return []
    if found and _after_the_claim(repo, task.id, entries):  # in the claim's own second
        return []
    return [
        problem(
            "owned_files_untouched",
            id=task.id,
            holder=task.holder,
            claimedAt=claimed,
            owned=entries,
            owned_text=", ".join(entries),
        )
    ]


def claimed_at(repo: Repository, task_id: str) -> str | None:
    """When the task was claimed: the `at` of its claim (`_claim_file`), read as written
    (`status_file.written_at`), or as YAML when it is not in that form."""
    claim = _claim_file(repo, task_id)
    if claim is None:
        return None
    try:
        data = repo.read_bytes(claim)
    except OSError:
        return None
    found = written_at(data.decode("utf-8", "replace"))
    if found is not None:
        return found
    from taskfs.core import yamlio

    try:
        document = yamlio.load(data)
    except yamlio.YamlError:
        return None
    at = document.get("at") if isinstance(document, dict) else None
    return at if isinstance(at, str) else None


def _after_the_claim(repo: Repository, task_id: str, entries: list[str]) -> bool:
    """Whether a commit the claim's commit does not hold touched the owned files: what a
    commit in the claim's own second leaves open (rare: ancestry, from two more git calls)."""
    rel = _claim_file(repo, task_id)
    claim = repo.git.touching("HEAD", [f":(literal){rel}"], limit=1) if rel else []
    if not claim:
        return True  # no commit holds the claim: say nothing rather than guess
    return bool(commits.touching(repo, f"{claim[0].commit}..HEAD", entries, limit=1))


def _claim_file(repo: Repository, task_id: str) -> str | None:
    """The task's claim: its first status file entering `working` (a later one is a return
    from a question); None when it has none."""
    claims = sorted(
        name
        for name in repo.list_dir(task_id, STATUS)
        if (match := STATUS_NAME_RE.fullmatch(name)) is not None and match["state"] == "working"
    )
    return repo.task_rel(task_id, STATUS, claims[0]) if claims else None
