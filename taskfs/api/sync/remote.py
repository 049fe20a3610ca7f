"""`taskfs sync` and `claim --sync`: the ledger exchanged with a git remote.

One round: fetch the upstream branch; make each unpublished transition that forks a published
one lose to it (core/forks.py: what was pushed first is never overturned by what was not); merge
the upstream (a real merge commit, built without touching the working tree; published history is
never rewritten); move the index and working tree to the result, carrying the user's uncommitted
work as `git checkout` does, or stop naming what is in the way; push, never forced. When the
push loses a race with another clone's (the remote moved), or finds the remote's branch locked
by another clone's push in flight (`[remote rejected] (failed to update ref)`), wait a jittered,
growing while and go round again, until `syncTimeoutSeconds` has passed: under many clones the
number of rounds a sync needs grows with the clones, the time it may take does not.

Nothing is changed in this checkout when a round stops: merges are computed with `git merge-tree`
and HEAD moves by compare-and-swap only once the working tree has been moved.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from taskfs.api.lifecycle import transitions
from taskfs.api.lifecycle.forks import Lost
from taskfs.api.review import authority
from taskfs.api.tasks.filing import record_bytes
from taskfs.core import forks
from taskfs.core.layout import ENVELOPE, STATUS, STATUS_NAME_RE
from taskfs.core.lifecycle import next_states
from taskfs.errors import Problem, TaskfsError, fail, problem
from taskfs.store import fs
from taskfs.store.commit_chains import CommitChains
from taskfs.store.git.objects import Identity
from taskfs.store.git.session import Session, open_session
from taskfs.store.repository import Repository

# The back-off between rounds: a random pause up to BACKOFF_S * 2^(round - 1), at most
# BACKOFF_CAP_S ("full jitter"), so that clones that lost a race together do not meet again.
BACKOFF_S = 0.05
BACKOFF_CAP_S = 1.0
# What the remote answers when its ref is locked by a concurrent push (git's ref transaction
# failed: `cannot lock ref`), which says nothing of who will win: worth another round even when
# the remote did not move.
LOCKED = ("failed to update ref", "failed to lock", "cannot lock ref", "incorrect old value")
MOVED = ("fetch first", "non-fast-forward")
# A lock refused this long while the branch did not move is no push in flight: it is stale.
STALE_LOCK_S = 30


@dataclass(frozen=True)
class Upstream:
    remote: str
    branch: str
    local: str

    @property
    def name(self) -> str:
        return f"{self.remote}/{self.branch}"


@dataclass(frozen=True)
class Demoted:
    """An unpublished transition made to lose to a published one: renamed (`now`) or dropped."""

    id: str
    file: str
    now: str | None
    lost: Lost


@dataclass
class Synced:
    upstream: Upstream
    fetched: str | None = None
    head: str | None = None
    integration: str = "none"
    pushed: str | None = None
    attempts: int = 0
    demoted: list[Demoted] = field(default_factory=list)
    superseded: list[Lost] = field(default_factory=list)


@dataclass(frozen=True)
class ClaimSynced:
    id: str
    state: str
    commit: str
    upstream: Upstream
    attempts: int


# -- finding the upstream --------------------------------------------------------------


def find_upstream(repo: Repository, remote: str | None = None) -> Upstream:
    """The remote and branch to sync with: `remote` (same branch name) or the upstream set."""
    git = repo.git
    local = git.branch()
    if local is None:
        raise fail("sync_detached_head")
    configured = git.config(f"branch.{local}.remote")
    name = remote or configured
    if name is None:
        raise fail("sync_no_upstream", branch=local)
    if name not in git.remotes():
        raise fail("sync_no_upstream", branch=local, reason_text=f" ({name!r} is no remote here)")
    merge = git.config(f"branch.{local}.merge")
    branch = local
    if merge and configured == name:
        branch = merge.removeprefix("refs/heads/")
    return Upstream(name, branch, local)


def fetch(repo: Repository, upstream: Upstream) -> str | None:
    """Fetch the upstream branch; `history_rewritten` (nothing merged, nothing of this clone
    changed) when its new history dropped ledger commits this clone has and the remote once
    held: adopting it would let a forced push overturn what was published before it."""
    git = repo.git
    before = git.tracking(upstream.remote, upstream.branch)
    fetched = git.fetch(upstream.remote, upstream.branch)
    ref = f"refs/remotes/{upstream.remote}/{upstream.branch}"
    dropped = git.dropped(ref, fetched, repo.tasks_rel, also=before)
    if dropped:
        then = ": nothing was merged or pushed"
        raise TaskfsError(rewritten(upstream.remote, upstream.branch, fetched or "", dropped, then))
    return fetched


def rewritten(remote: str, branch: str, tip: str, dropped: Sequence[str], then: str) -> Problem:
    more = f" and {len(dropped) - 1} more" if len(dropped) > 1 else ""
    return problem(
        "history_rewritten",
        path=f"refs/remotes/{remote}/{branch}",
        remote=remote,
        branch=branch,
        tip=tip[:12],
        dropped=len(dropped),
        commits=[commit[:12] for commit in dropped[:20]],
        first=dropped[0][:12],
        more_text=more,
        then_text=then,
    )


@contextmanager
def _one_sync_at_a_time(repo: Repository) -> Iterator[None]:
    with fs.repo_lock(repo.state_dir() / "sync.lock"):
        yield


# -- sync ------------------------------------------------------------------------------


def sync(repo: Repository, *, remote: str | None = None, agent: str | None = None) -> Synced:
    """Rounds of fetch, settle, merge and push until the push lands (merge commits are
    authored by `agent`, or `taskfs`)."""
    upstream = find_upstream(repo, remote)
    result = Synced(upstream)
    patience = _Patience(upstream, repo.config.sync_timeout_seconds)
    with _one_sync_at_a_time(repo), open_session(repo.git) as session:
        refused: tuple[str | None, str] | None = None
        redo: tuple[str | None, str | None] | None = None
        while True:
            result.attempts += 1
            fetched = fetch(repo, upstream)
            patience.saw(fetched)
            if refused is not None and refused[0] == fetched and not contended(refused[1]):
                # Refused although nobody else pushed in between: not a race, a refusal.
                raise _push_rejected(upstream, refused[1], result.attempts - 1)
            step = _integrate(repo, session, upstream, fetched, agent, redo=redo)
            result.fetched, result.head = fetched, step.head
            # A round done afresh reports its demotions afresh (they include the last's).
            result.demoted = step.demoted if step.redone else result.demoted + step.demoted
            result.superseded += step.superseded
            if step.kind != "none":
                result.integration = step.kind
            if step.head is None or step.head == fetched:
                return result
            reason = repo.git.push(upstream.remote, step.head, upstream.branch)
            if reason is None:
                result.pushed = step.head
                return result
            refused = (fetched, reason)
            redo = (step.base, step.head)
            patience.refused(reason, result.attempts)


def locked(reason: str) -> bool:
    """Whether the remote refused a push because another push held its branch's lock."""
    return any(mark in reason for mark in LOCKED)


def contended(reason: str) -> bool:
    """Whether the remote refused a push for another clone's push: it moved (git's `fetch
    first`, `non-fast-forward`) or its branch was locked. Such a refusal is tried again (until
    the time bound) even when a fetch right after it does not show the move yet; any other is
    a refusal."""
    return locked(reason) or any(mark in reason for mark in MOVED)


class _Patience:
    """The bound on a sync's rounds: a time, not a count, and a branch that stays locked while
    nothing lands is not waited out (a push that crashed leaves its lock file behind)."""

    def __init__(self, upstream: Upstream, seconds: int) -> None:
        self.upstream, self.seconds = upstream, seconds
        self.deadline = time.monotonic() + seconds
        self.tip: str | None = None
        self.moved_at = time.monotonic()

    def saw(self, tip: str | None) -> None:
        """The remote's branch as fetched: when it last moved is when others last got through."""
        if tip != self.tip:
            self.tip, self.moved_at = tip, time.monotonic()

    def refused(self, reason: str, attempt: int) -> None:
        """After push number `attempt` was refused: wait a jittered while that grows with the
        rounds, or raise `sync_push_rejected` when the time is spent or the lock is stale."""
        now = time.monotonic()
        branch = self.upstream.branch
        if locked(reason) and now - self.moved_at >= STALE_LOCK_S:
            why = (
                f"{reason} (locked for {STALE_LOCK_S} s while no push landed: a push that "
                f"crashed may have left refs/heads/{branch}.lock on the remote)"
            )
            raise _push_rejected(self.upstream, why, attempt, gave_up=True)
        left = self.deadline - now
        if left <= 0:
            why = (
                f"{reason} (still refused after {attempt} tries in {self.seconds} s: "
                "syncTimeoutSeconds)"
            )
            raise _push_rejected(self.upstream, why, attempt, gave_up=True)
        ceiling = min(BACKOFF_CAP_S, BACKOFF_S * (1 << min(attempt - 1, 16)))
        time.sleep(min(left, random.uniform(0, ceiling)))


def _push_rejected(
    upstream: Upstream, reason: str, attempts: int, *, gave_up: bool = False
) -> TaskfsError:
    return fail(
        "sync_push_rejected",
        remote=upstream.remote,
        branch=upstream.branch,
        reason=reason,
        attempts=attempts,
        gave_up=gave_up,
    )


# -- claim --sync ----------------------------------------------------------------------


def claim_sync(
    repo: Repository, task_id: str, agent: str, *, remote: str | None = None
) -> ClaimSynced:
    """Claim and push. The first claim to reach the remote wins: when fetching shows that
    another transition of the task was pushed first, this claim (never pushed) is withdrawn and
    the claim refused with `transition_not_allowed` naming the winner."""
    upstream = find_upstream(repo, remote)
    git = repo.git
    patience = _Patience(upstream, repo.config.sync_timeout_seconds)
    with _one_sync_at_a_time(repo), open_session(git) as session:
        integrated = fetch(repo, upstream)
        patience.saw(integrated)
        _integrate(repo, session, upstream, integrated, agent)
        moved = transitions.transition(repo, task_id, "working", agent, notify=False)
        attempts = 0
        redo: tuple[str | None, str | None] | None = None
        while True:
            attempts += 1
            try:
                head = git.head()
                assert head is not None
                reason = git.push(upstream.remote, head, upstream.branch)
                if reason is None:
                    transitions.tell_claim(repo, task_id, agent)
                    return ClaimSynced(task_id, moved.state, moved.commit, upstream, attempts)
                patience.refused(reason, attempts)
                fetched = fetch(repo, upstream)
                patience.saw(fetched)
                if fetched == integrated and not contended(reason):
                    raise _push_rejected(upstream, reason, attempts)
                step = _integrate(
                    repo, session, upstream, fetched, agent, withdraw=moved.status_file, redo=redo
                )
                redo = (step.base, step.head)
            except TaskfsError:
                _withdraw(repo, upstream, moved.status_file)
                raise
            if step.withdrawn is not None:
                raise TaskfsError(_lost_claim(task_id, step.withdrawn))
            integrated = fetched


def _lost_claim(task_id: str, lost: Lost) -> Problem:
    if lost.winner_state == "working":
        why = f" (it was already claimed by {lost.winner_by!r}, whose claim was pushed first)"
    else:
        why = f" ({lost.winner_by!r} moved it to {lost.winner_state} first)"
    return problem(
        "transition_not_allowed",
        id=task_id,
        from_state="submitted",
        to_state="working",
        next_states=next_states("submitted"),
        by=lost.winner_by,
        winner_file=lost.winner_file,
        lost_race=True,
        why_text=why,
    )


def _withdraw(repo: Repository, upstream: Upstream, rel: str) -> None:
    """Take back an unpublished claim: rewrite the unpublished commits without its file."""
    git = repo.git
    with repo.writing():
        head = git.head()
        if head is None or rel not in git.unpublished_additions(head, rel):
            return
        rewritten = git.rewrite(git.unpublished(head), {rel: None}).get(head, head)
        _move(repo, upstream, head, rewritten)


# -- one round of integration ----------------------------------------------------------


@dataclass
class _Step:
    head: str | None
    kind: str = "none"
    demoted: list[Demoted] = field(default_factory=list)
    superseded: list[Lost] = field(default_factory=list)
    withdrawn: Lost | None = None
    # The commit this round merged from: HEAD, or, after a round whose push was refused, the
    # work that round merged (`redo`).
    base: str | None = None
    redone: bool = False


def _integrate(
    repo: Repository,
    session: Session,
    upstream: Upstream,
    fetched: str | None,
    agent: str | None,
    *,
    withdraw: str | None = None,
    redo: tuple[str | None, str | None] | None = None,
) -> _Step:
    """One round: settle, merge `fetched`, move the checkout. `redo` is (the work the last
    round merged, the merge it made) when that round's push was refused: while HEAD is still
    that merge, this round merges the same work with the new tip afresh, so a sync that loses
    many races publishes one merge, not one per round, and each round costs what the first
    did (a merge on a merge grows the history every lost round walks again)."""
    git = repo.git
    with repo.writing():
        operation = git.operation_in_progress()
        if operation is not None:
            raise fail("sync_in_progress", operation=operation)
        head = git.head()
        ours = redo[0] if redo is not None and head == redo[1] else head
        late = late_transitions(repo, session, ours, fetched)
        if late:
            raise TaskfsError(late)
        step = _settle(repo, session, ours, fetched, withdraw)
        step.base, step.redone = ours, ours != head
        merged, step.kind = _merge(repo, session, upstream, step.head, fetched, agent=agent)
        step.head = merged
        if merged is not None and merged != head:
            _move(repo, upstream, head, merged)
            if head is not None:
                step.superseded = _newly_superseded(repo, session, head, fetched, merged)
    return step


def _settle(
    repo: Repository, session: Session, head: str | None, fetched: str | None, withdraw: str | None
) -> _Step:
    """Rewrite unpublished history so that none of its transitions overturns a published one."""
    step = _Step(head)
    if head is None or fetched is None:
        return step
    git = repo.git
    mine: dict[str, set[str]] = {}
    for path in git.unpublished_additions(head, repo.tasks_rel):
        found = _status_path(repo, path)
        if found:
            mine.setdefault(found[0], set()).add(found[1])
    withdrawn = _status_path(repo, withdraw) if withdraw else None
    edits: dict[str, tuple[str, bytes] | None] = {}
    theirs, ours = CommitChains(repo, session, fetched), CommitChains(repo, session, head)
    for task_id, names in sorted(mine.items()):
        published = theirs.links(task_id)
        if not published:
            continue
        drop = {withdrawn[1]} if withdrawn and withdrawn[0] == task_id else set()
        unpublished = [link for link in ours.links(task_id) if link.name in names]
        plan = forks.settle(published, unpublished, drop=drop)
        edits.update(_edits(repo, ours, task_id, plan))
        step.demoted += _demotions(task_id, plan)
        for loss in plan.losses:
            if loss.link.name in drop and loss.link.name in plan.dropped:
                step.withdrawn = Lost.of(task_id, loss)
    if edits:
        step.head = git.rewrite(git.unpublished(head), edits).get(head, head)
    return step


def late_transitions(
    repo: Repository, session: Session, ours: str | None, theirs: str | None
) -> list[Problem]:
    """Status files one side added after the transition they fork, which their commit already
    held (`forks.late_siblings`): illegal transitions, not forks; a sync that would merge or
    push one stops. Only what the two sides do not share yet is looked at."""
    if ours is None or theirs is None or ours == theirs:
        return []
    git = repo.git
    new: dict[str, set[str]] = {}
    for path in git.added_between(ours, theirs, repo.tasks_rel):
        found = _status_path(repo, path)
        if found:
            new.setdefault(found[0], set()).add(found[1])
    problems: list[Problem] = []
    sides = (CommitChains(repo, session, ours), CommitChains(repo, session, theirs))
    for task_id, names in sorted(new.items()):
        links = {link.name: link for side in sides for link in side.links(task_id)}
        prevs = [link.record.prev for link in links.values()]
        if len(prevs) == len(set(prevs)):
            continue  # no two transitions follow the same one: nothing forks
        folder = repo.task_rel(task_id, STATUS)
        added = git.file_additions([folder], (ours, theirs))
        commit_of = {
            name: added[rel].commit
            for name in links
            if (rel := repo.task_rel(task_id, STATUS, name)) in added
        }
        states = {link.name: link.record.state for link in links.values()}
        for loss in forks.late_siblings(links.values(), commit_of, session.is_ancestor):
            if loss.link.name in names:
                before = states.get(loss.link.record.prev or "")
                problems.append(authority.late_problem(repo, task_id, loss, before))
    return problems


def _edits(
    repo: Repository, ours: CommitChains, task_id: str, plan: forks.Settlement
) -> dict[str, tuple[str, bytes] | None]:
    def rel(name: str) -> str:
        return repo.task_rel(task_id, STATUS, name)

    edits: dict[str, tuple[str, bytes] | None] = {}
    for old, new in plan.renamed.items():
        data = ours.blob(rel(old))
        assert data is not None
        edits[rel(old)] = (rel(new), data)
    for name, record in plan.new_prev.items():
        edits[rel(name)] = (rel(name), record_bytes(_resigned(record.to_document())))
    for name in plan.dropped:
        edits[rel(name)] = None
    return edits


def _resigned(document: dict[str, Any]) -> dict[str, Any]:
    """A signed transition whose `prev` settling changed, signed again by its agent when this
    machine holds the key (it made the transition here, unpublished); else left unsigned,
    which audit names where the agent has a key, rather than carrying a signature that no
    longer verifies."""
    if "sig" not in document:
        return document
    from taskfs.core.transition_signing import sign_document
    from taskfs.store import keys

    pair = keys.load_private("agent", str(document["by"]))
    if pair is None:
        return {k: v for k, v in document.items() if k != "sig"}
    return sign_document(document, pair.private)


def _demotions(task_id: str, plan: forks.Settlement) -> list[Demoted]:
    out = []
    for loss in plan.losses:
        lost = Lost.of(task_id, loss)
        old = next((o for o, n in plan.renamed.items() if n == loss.link.name), None)
        if old is not None:
            out.append(Demoted(task_id, old, loss.link.name, lost))
        elif loss.link.name in plan.dropped:
            out.append(Demoted(task_id, loss.link.name, None, lost))
    return out


def _merge(
    repo: Repository,
    session: Session,
    upstream: Upstream,
    ours: str | None,
    theirs: str | None,
    *,
    agent: str | None,
) -> tuple[str | None, str]:
    git = repo.git
    if theirs is None or theirs == ours:
        return ours, "none"
    if ours is None or session.is_ancestor(ours, theirs):
        return theirs, "fast-forward"
    if session.is_ancestor(theirs, ours):
        return ours, "none"
    if not git.have_common_history(ours, theirs):
        raise fail("sync_unrelated_histories", upstream=upstream.name)
    tree, conflicted = git.merge_tree(ours, theirs)
    if conflicted:
        raise TaskfsError(_conflicts(repo, upstream, conflicted))
    message = (
        f"Merge {upstream.name} into {upstream.local} (taskfs sync)\n\n"
        f"Taskfs-Sync: {upstream.name}\n"
    )
    commit = git.write_commit(tree, (ours, theirs), message, Identity.agent(agent or "taskfs"))
    return commit, "merge"


def _move(repo: Repository, upstream: Upstream, old: str | None, new: str) -> None:
    git = repo.git
    blocked = git.switch_tree(old, new)
    if blocked:
        raise fail(
            "sync_local_changes",
            upstream=upstream.name,
            paths=blocked,
            paths_text=_some(blocked),
        )
    if not git.move_head(new, old, f"taskfs sync: {upstream.name}"):
        git.switch_tree(new, old or git.empty_tree)
        raise fail("git_failed", command="update-ref", reason="HEAD moved during taskfs sync")


def _conflicts(repo: Repository, upstream: Upstream, paths: Sequence[str]) -> list[Problem]:
    problems = []
    others = []
    for path in paths:
        parts = path.removeprefix(repo.tasks_rel + "/").split("/")
        if path.startswith(repo.tasks_rel + "/") and parts[1:] == [ENVELOPE]:
            reason = (
                f"this clone and {upstream.name} each submitted one; nothing was merged: submit "
                "the unpublished one again under another id and drop its first submission from "
                "unpublished history (README: Id collisions)"
            )
            problems.append(problem("task_id_collision", id=parts[0], path=path, reason=reason))
        else:
            others.append(path)
    if others:
        problems.append(
            problem("sync_conflict", upstream=upstream.name, paths=others, paths_text=_some(others))
        )
    return problems


def _newly_superseded(
    repo: Repository, session: Session, old: str, fetched: str | None, new: str
) -> list[Lost]:
    """The transitions this merge superseded (`forks.news`): told once, in the clone where the
    two sides of the fork met."""
    changed = [_status_path(repo, path) for path in session.changed_paths(old, new, repo.tasks_rel)]
    task_ids = sorted({found[0] for found in changed if found})
    sides = [CommitChains(repo, session, old), CommitChains(repo, session, fetched)]
    after = CommitChains(repo, session, new)
    out: list[Lost] = []
    for task_id in task_ids:
        was = {link.name for side in sides for link in side.chain(task_id).superseded}
        out += [Lost.of(task_id, loss) for loss in forks.news(after.chain(task_id), was)]
    return out


def _status_path(repo: Repository, path: str) -> tuple[str, str] | None:
    """(task id, file name) when `path` is a status file of a task."""
    prefix = repo.tasks_rel + "/"
    parts = path[len(prefix) :].split("/") if path.startswith(prefix) else []
    if len(parts) == 3 and parts[1] == STATUS and STATUS_NAME_RE.fullmatch(parts[2]):
        return parts[0], parts[2]
    return None


def _some(paths: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
