"""What waits for an agent's decision, read from its inbox: the one rule the board's "needs
you" marks and counts show (issue 39, item 2), never worked out again beside the inbox.

From an `Inbox` (`taskfs.api.messages.inbox`):

- a question put to it that no answer has closed: **answer** it;
- a result of a task it sent that no check has answered yet: **review** it (run the check);
- a task it sent that came back refused or failed and is not handled: **retry** it (or let it
  go);
- a task it sent whose holder has gone quiet: **hand it on** (or ask);
- a request addressed to it that has no proposal yet: **propose** an envelope;
- a request it made whose proposal waits: **accept** it.

Each names the command, and the MCP tool, that settles it. Tasks to claim are not decisions
but work: they are what is next (`taskfs ready`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from taskfs.api.messages.inbox import Inbox

KINDS = ("answer", "review", "retry", "hand_on", "propose", "accept")


@dataclass(frozen=True)
class Decision:
    agent: str  # who it waits for
    kind: str  # one of KINDS
    task: str  # the task (or request) it concerns
    message: str | None  # the message it answers (a question, a result)
    command: str  # the command that settles it
    tool: str  # the MCP tool that settles it

    def to_json(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "kind": self.kind,
            "task": self.task,
            "msg_id": self.message,
            "command": self.command,
            "tool": self.tool,
        }


def decisions(box: Inbox) -> tuple[Decision, ...]:
    """What waits for `box.agent`'s decision, in the order of `KINDS`."""
    agent = box.agent
    out: list[Decision] = []
    for checked in box.questions:
        task, msg = checked.record.task_id or "", checked.record.msg_id
        out.append(
            Decision(
                agent,
                "answer",
                task,
                msg,
                f'taskfs send {task} --in-reply-to {msg} "answer"',
                f"agent_answer({task}, {msg}, text)",
            )
        )
    for checked in box.results:
        task, msg = checked.record.task_id or "", checked.record.msg_id
        out.append(
            Decision(agent, "review", task, msg, f"taskfs check {task}", f"agent_history({task})")
        )
    for sent in box.ended:
        out.append(
            Decision(
                agent,
                "retry",
                sent.id,
                None,
                f"taskfs retry {sent.id} [--to AGENT]",
                f"agent_retry({sent.id}, to)",
            )
        )
    for sent in box.quiet:
        out.append(
            Decision(
                agent,
                "hand_on",
                sent.id,
                None,
                f"taskfs reassign {sent.id} --to AGENT",
                f"agent_reassign({sent.id}, to)",
            )
        )
    for intake in box.requests:
        if intake.pending_proposal() is None:
            out.append(
                Decision(
                    agent,
                    "propose",
                    intake.id,
                    None,
                    f"taskfs intake propose {intake.id} FILE",
                    f"agent_propose({intake.id}, envelope)",
                )
            )
    for intake in box.requested:
        if intake.pending_proposal() is not None:
            out.append(
                Decision(
                    agent,
                    "accept",
                    intake.id,
                    None,
                    f"taskfs intake accept {intake.id}",
                    f"agent_accept({intake.id})",
                )
            )
    return tuple(out)
