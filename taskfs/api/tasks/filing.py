"""How a ledger record becomes a file's bytes, and `validate`'s report on one file.

Kept apart so that every writer of records (submit, messages, evidence, wire, sync) shares it
without importing one another.
"""

from __future__ import annotations

from typing import NamedTuple

from taskfs.core import yamlio
from taskfs.errors import Problem


class FileReport(NamedTuple):
    path: str
    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems


def record_bytes(document: dict[str, object]) -> bytes:
    return yamlio.dump(document).encode()
