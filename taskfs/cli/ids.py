"""A task id on the command line: every command that takes one reads it through `TASK_ID`, so
that a malformed id (`../etc`, `Div-Zero`) is refused as `invalid_task_id` by every command
alike, before anything is looked up (it is no task that could be missing: `task_not_found`
would send the user looking for it). The rule is the contract's, `layout.is_task_id`.
"""

from __future__ import annotations

from typing import Any

import click

from taskfs.core.layout import is_task_id
from taskfs.errors import TaskfsError


class TaskIdType(click.ParamType):  # type: ignore[type-arg]
    name = "id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not is_task_id(value):
            # A refusal, not a usage error: `taskfs.cli.app.run` prints it as every refusal is
            # printed (by code, as JSON with --json) and exits 1.
            from taskfs.api.tasks.suggest import malformed

            raise TaskfsError(malformed(value))
        return value


TASK_ID = TaskIdType()
