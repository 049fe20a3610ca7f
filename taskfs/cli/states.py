"""The STATE argument of `move`: the eight states exactly; a near miss names the state meant."""

from __future__ import annotations

from typing import Any

import click

from taskfs.core.lifecycle import STATES
from taskfs.core.synonyms import meant


class StateChoice(click.Choice):  # type: ignore[type-arg]
    def __init__(self) -> None:
        super().__init__(STATES)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in STATES:
            return value
        guess = meant(value) if isinstance(value, str) else None
        hint = f": did you mean {guess!r}?" if guess else ""
        return self.fail(
            f"{value!r} is not a state{hint} (states: {', '.join(STATES)})", param, ctx
        )
