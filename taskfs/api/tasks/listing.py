"""Listings answered from the read model's store: `ls` and `ready`.

They are called thousands of times a day, so this module imports nothing heavy: no pydantic,
no YAML. What they answer is what the full reader would (store/index.py says why).
"""

from __future__ import annotations

from taskfs.readmodel.projection import Summary
from taskfs.store import index
from taskfs.store.repository import Repository

TYPE_CHECKING = False
if TYPE_CHECKING:
    from taskfs.readmodel.filters import Filters


def ls(repo: Repository, filters: Filters = ()) -> list[Summary]:
    """The tasks `ls` shows (an envelope the watcher has not taken in yet is not a task) that
    pass `filters` (fields of a task's row and the values they must hold, from the option
    table: `--state`, `--to`, `--context`, `--label`, `--grep`; `taskfs.readmodel.filters`);
    with `("archived", True)`, the tasks `taskfs archive` took out of the working tree."""
    return index.listing(repo, filters)


def ready(repo: Repository, agent: str | None = None, filters: Filters = ()) -> list[Summary]:
    """The tasks a claim would succeed on now (by `agent`, when one is named) that pass
    `filters`, the most urgent first, then the oldest: the same rules as the claim's gates
    (`taskfs.core.readiness`), kept in the store (a dependency counts completed as its row
    says its completion stands), and the claim's own checks of a dependency read from a word
    (an archived task's row, a successor's link) and of the runs completions rest on, where
    runner keys are trusted (`standing.offered`)."""
    from taskfs.core.lineage import Lineage
    from taskfs.core.readiness import rests_on_words

    found = index.ready(repo, agent, filters)
    if not any(summary.envelope.depends_on for summary in found):
        return found  # neither a word nor a run to ask of
    ledger = index.summaries(repo)
    lineage = Lineage(ledger)
    if not any(rests_on_words(summary, ledger, lineage) for summary in found):
        from taskfs.readmodel.listing import runs_trusted

        if not runs_trusted(ledger.view.runners):
            return found  # neither a word nor a run a runner trusted now must have signed
    from taskfs.api.lifecycle.standing import offered

    return offered(repo, ledger, found)


def catch_up(root: str) -> bool:
    """Bring the read model of the checkout at `root` up to HEAD, when HEAD moved since it
    was settled; the fast path asks this (`taskfs.readmodel.db.answer`) rather than answer
    through the full listing."""
    return index.catch_up(root)
