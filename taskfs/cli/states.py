"""A STATE the command line takes (`move`'s argument, `ls --state`): the states exactly; a near
miss names the state meant (`done`: `completed`), as an unknown key names the one meant."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import click

from taskfs import i18n
from taskfs.core.lifecycle import STATES
from taskfs.core.synonyms import meant


class StateChoice(click.Choice):  # type: ignore[type-arg]
    def __init__(self, states: Sequence[str] = STATES) -> None:
        super().__init__(states)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and value in self.choices:
            return value
        guess = meant(value, [str(c) for c in self.choices]) if isinstance(value, str) else None
        hint = i18n.say(": did you mean {guess!r}?", guess=guess) if guess else ""
        return self.fail(
            i18n.say(
                "{value!r} is not a state{hint} (states: {states})",
                value=value,
                hint=hint,
                states=", ".join(str(c) for c in self.choices),
            ),
            param,
            ctx,
        )
