"""The envelope a peer's opening makes when it is imported (interlink's first message on a
task): the import's own rule (`taskfs.api.messages.wire`), which `audit` replays to tell an
opening that vouches for a `submitted` (`taskfs.api.review.authority`) from one that does not.
Apart from the import so that the rules of authority can read it without the writers."""

from __future__ import annotations

from taskfs.api.tasks import submit
from taskfs.core import interlink as vocabulary
from taskfs.core import yamlio
from taskfs.core.intake import fields_of
from taskfs.core.records import MessageRecord
from taskfs.errors import TaskfsError
from taskfs.store.repository import Repository


def opened_envelope(repo: Repository, record: MessageRecord) -> bytes | None:
    """The envelope file a peer's opening `record` makes when imported (`_Importer._open`),
    or None when its text opens no task: what audit matches against the committed one."""
    fields = envelope_in(record.text)
    if fields is None or record.task_id is None or record.recipient is None:
        return None
    addressed, wrong = vocabulary.addressed(
        {**fields, "id": fields.get("id", record.task_id)}, record.sender, record.recipient
    )
    if wrong is not None or addressed["id"] != record.task_id:
        return None
    try:
        envelope, _ = submit.parse_source(
            submit.Source("opening", yamlio.dump(addressed).encode("utf-8"))
        )
    except TaskfsError:
        return None
    return None if envelope is None else submit.envelope_bytes(repo, envelope)


def envelope_in(text: str) -> dict[str, object] | None:
    """The envelope fields a kept text carries, read as every kept request's words are."""
    return fields_of(text)
