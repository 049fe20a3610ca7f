"""Whether a peer's signed messages make the envelope a task was submitted with (contract
section 12): the `audit` side of an intake that a peer completed over interlink.

A peer's opening that is a whole envelope vouches for its `submitted` byte for byte. A request
completed in parts vouches for it only as a whole: every request of the intake came in a
message of the requester's, carrying exactly the request's words, and the envelope those
words make is the one committed. The last of those messages is the one the `submitted` names;
its signature is the caller's to check.
"""

from __future__ import annotations

from taskfs.api.messages.threads import read_thread
from taskfs.api.tasks.submit import envelope_bytes
from taskfs.core import messages as message_rules
from taskfs.core.envelope import validate_envelope
from taskfs.core.intake import Intake
from taskfs.core.layout import ENVELOPE
from taskfs.core.records import MessageRecord
from taskfs.errors import TaskfsError
from taskfs.store.intake_reader import load_intake
from taskfs.store.repository import Repository


def composes(repo: Repository, task_id: str, record: MessageRecord) -> bool:
    """Whether `record` completed the intake of `task_id`, and the requester's messages make
    the committed envelope (see the module's account)."""
    try:
        intake, problems = load_intake(repo, task_id)
        committed = repo.read_bytes(repo.task_rel(task_id, ENVELOPE))
    except (TaskfsError, OSError):
        return False
    requests = intake.requests()
    if problems or not requests or requests[-1].record.message != record.msg_id:
        return False
    thread = read_thread(repo, task_id, trusted=message_rules.SenderTrust({}, False), pending=set())
    for entry in requests:
        said = thread.find(entry.record.message) if entry.record.message else None
        if said is None or said.record.sender != intake.requester:
            return False
        if said.record.text != entry.record.text:
            return False
    return _envelope(repo, intake) == committed


def _envelope(repo: Repository, intake: Intake) -> bytes | None:
    envelope, problems = validate_envelope(intake.draft())
    return None if envelope is None or problems else envelope_bytes(repo, envelope)
