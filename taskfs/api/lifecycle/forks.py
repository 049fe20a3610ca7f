"""Superseded transitions: the losing side of forks between clones, as the losers should hear it.

`superseded_transitions(repo, agent)` is the data an agent's inbox shows ("your claim of X was
superseded by bob's"); `taskfs sync` and `taskfs log` render the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taskfs import i18n
from taskfs.core.chain import Chain
from taskfs.core.forks import Loss, losses
from taskfs.store.all_tasks import load_all
from taskfs.store.repository import Repository


@dataclass(frozen=True)
class Lost:
    """One superseded transition of a task, and the winner at the fork where it lost."""

    id: str
    file: str
    state: str
    by: str
    at: str
    winner_file: str | None
    winner_state: str | None
    winner_by: str | None

    @classmethod
    def of(cls, task_id: str, loss: Loss) -> Lost:
        record, winner = loss.link.record, loss.winner
        return cls(
            id=task_id,
            file=loss.link.name,
            state=record.state,
            by=record.by,
            at=record.at,
            winner_file=winner.name if winner else None,
            winner_state=winner.record.state if winner else None,
            winner_by=winner.record.by if winner else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "file": self.file,
            "state": self.state,
            "by": self.by,
            "at": self.at,
            "supersededBy": {
                "file": self.winner_file,
                "state": self.winner_state,
                "by": self.winner_by,
            },
        }

    def text(self) -> str:
        winner = (
            i18n.say("{state} by {agent}", state=self.winner_state, agent=self.winner_by)
            if self.winner_by
            else i18n.say("another branch")
        )
        return i18n.say(
            "{id}: {state} by {agent} ({file}) superseded by {winner}",
            id=self.id,
            state=self.state,
            agent=self.by,
            file=self.file,
            winner=winner,
        )


def lost_in(task_id: str, chain: Chain, agent: str | None = None) -> list[Lost]:
    return [
        Lost.of(task_id, loss)
        for loss in losses(chain)
        if agent is None or loss.link.record.by == agent
    ]


def superseded_transitions(repo: Repository, agent: str | None = None) -> list[Lost]:
    """Every superseded transition in the ledger (made by `agent`, when one is named)."""
    out: list[Lost] = []
    for task_id, task in sorted(load_all(repo).items()):
        out += lost_in(task_id, task.chain, agent)
    return out
