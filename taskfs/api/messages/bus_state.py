"""What one checkout's bridge for one agent did on the buses: the messages each bus accepted,
where peers asked their replies to go, and why a message waits. Kept under `.git/taskfs/` (it
is this checkout's delivery state, not history), in one small JSON file per agent.

It is also what a message's delivery means, as interlink has it (`message_status`,
`list_pending`): a message the agent signed is `pending` until a bus accepted it, `sent` once
one did.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from taskfs.store.repository import Repository


def state_path(repo: Repository, agent: str) -> Path:
    return repo.state_dir() / "interlink" / f"bridge-{agent}.json"


@dataclass
class State:
    """`posted`: bus URL -> msg_ids it accepted; `routes`: peer key -> the `key#session` its
    replies go to (its unsigned `reply_to`); `held`: msg_id -> why it was not posted yet;
    `knocks`: key -> the pairing request it sent, not answered yet (`pairing`);
    `pairing_seen`: the msg_ids of the pairing messages taken (the latest 4,096)."""

    path: Path
    posted: dict[str, list[str]] = field(default_factory=dict)
    routes: dict[str, str] = field(default_factory=dict)
    held: dict[str, str] = field(default_factory=dict)
    knocks: dict[str, dict[str, str]] = field(default_factory=dict)
    pairing_seen: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> State:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls(path)  # missing or damaged: at worst messages are posted again
        if not isinstance(data, dict):
            return cls(path)
        posted, routes, held = (data.get(k) or {} for k in ("posted", "routes", "held"))
        knocks, seen = data.get("knocks") or {}, data.get("pairingSeen") or []
        return cls(
            path,
            {
                str(url): [str(m) for m in ids]
                for url, ids in (posted.items() if isinstance(posted, dict) else ())
                if isinstance(ids, list)
            },
            {str(k): str(v) for k, v in (routes.items() if isinstance(routes, dict) else ())},
            {str(k): str(v) for k, v in (held.items() if isinstance(held, dict) else ())},
            {
                str(k): {str(f): str(x) for f, x in v.items()}
                for k, v in (knocks.items() if isinstance(knocks, dict) else ())
                if isinstance(v, dict)
            },
            [str(m) for m in seen] if isinstance(seen, list) else [],
        )

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(self.path.name + ".tmp")
        body = {
            "posted": self.posted,
            "routes": self.routes,
            "held": self.held,
            "knocks": self.knocks,
            "pairingSeen": self.pairing_seen,
        }
        temp.write_text(json.dumps(body, indent=1))
        os.replace(temp, self.path)

    def accepted(self, urls: list[str] | None = None) -> set[str]:
        """The msg_ids a bus accepted (one of `urls`, or any)."""
        return {m for url, ids in self.posted.items() if urls is None or url in urls for m in ids}


def accepted_by_a_bus(repo: Repository, agent: str) -> set[str]:
    """The msg_ids of `agent`'s that some bus accepted from this checkout's bridge."""
    return State.load(state_path(repo, agent)).accepted()


def waiting(repo: Repository, agent: str) -> dict[str, str]:
    """msg_id -> why the bridge holds it back (no session to reach, say)."""
    return State.load(state_path(repo, agent)).held
