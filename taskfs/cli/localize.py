"""The command line in the user's language: the help of every command and option, and click's
own messages (usage errors, `Usage:`, `Try ... for help`).

The help texts stay English in the code and are translated when a command line is run, from
the catalogs' `help:command` entries (msgid: the English). Click writes its messages through
`gettext`'s global domain; `install()` points the `_`/`ngettext` of click's modules at the
`click:usage` entries instead, read at call time, so English costs one lookup of the language.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import click

from taskfs import i18n

_ENGLISH = "_taskfs_english"  # where each object keeps its English help


def localize(command: click.Command) -> None:
    """Set the help of `command` and all below it to the chosen language (English again when
    none is chosen: one process may run commands in both)."""
    install()
    for cmd in walk(command):
        english = cmd.__dict__.setdefault(_ENGLISH, (cmd.help, cmd.short_help))
        cmd.help = _help(english[0])
        cmd.short_help = _help(english[1])
        # click makes --help's option once, its help through `_`: made again in this language.
        cmd._help_option = None
        for option in (p for p in cmd.params if isinstance(p, click.Option)):
            option.help = _help(option.__dict__.setdefault(_ENGLISH, option.help))


def english_help(command: click.Command) -> list[str]:
    """Every help text below `command`, in English (for the catalogs' template)."""
    found: list[str] = []
    for cmd in walk(command):
        english = cmd.__dict__.get(_ENGLISH, (cmd.help, cmd.short_help))
        options = [p for p in cmd.params if isinstance(p, click.Option)]
        found += [t for t in english if t]
        found += [o.__dict__.get(_ENGLISH, o.help) for o in options if o.help]
    return list(dict.fromkeys(found))


def walk(command: click.Command) -> Iterator[click.Command]:
    yield command
    if isinstance(command, click.Group):
        for name in sorted(command.commands):
            yield from walk(command.commands[name])


def _help(english: str | None) -> str | None:
    return i18n.text(i18n.HELP, english) if english else english


def _gettext(message: str) -> str:
    return i18n.text(i18n.CLICK, message)


def _ngettext(singular: str, plural: str, n: int) -> str:
    return i18n.text(i18n.CLICK, singular if n == 1 else plural)


def install() -> None:
    """Route the messages of click's modules imported so far through taskfs's catalogs."""
    for name, module in list(sys.modules.items()):
        if name != "click" and not name.startswith("click."):
            continue
        if callable(getattr(module, "_", None)):
            setattr(module, "_", _gettext)  # noqa: B010 - click's modules, found at run time
        if callable(getattr(module, "ngettext", None)):
            setattr(module, "ngettext", _ngettext)  # noqa: B010
