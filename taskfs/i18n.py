"""Messages for people in their language, through gettext; codes and data never change.

The language is `--lang`, else `TASKFS_LANG`, else the locale variables in gettext's own order
(`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`). A language without a catalog reads English. The
catalogs (`locale/<lang>/LC_MESSAGES/taskfs.mo`, built from the committed `.po` by
`python -m taskfs.catalogs`) are opened only when a message is rendered, so importing this
module costs nothing on the listing path.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator
    from gettext import NullTranslations

DOMAIN = "taskfs"
LOCALE_DIR = os.path.join(os.path.dirname(__file__), "locale")
LOCALE_VARIABLES = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
SOURCE_LANGUAGES = ("en", "C", "POSIX")

# The contexts of the entries that are not error messages (an error's context is its code,
# which never holds a colon): command-line help, click's own messages, lines for people, and
# what `tools/list` of `taskfs mcp` tells a model (the tools' and their parameters'
# descriptions, the server's instructions).
HELP = "help:command"
CLICK = "click:usage"
TEXT = "text:summary"
TOOLS = "mcp:tools"

_chosen: str | None = None  # what --lang named
_catalogs: dict[tuple[str, ...], NullTranslations] = {}


def choose(lang: str | None) -> None:
    """Set the language for this process (`--lang`); None goes back to the environment."""
    global _chosen  # noqa: PLW0603 - one choice per process, made by the command line
    _chosen = lang or None


@contextmanager
def in_english() -> Iterator[None]:
    """English for a while, whatever the language: for the lines a document carries as data
    (an inbox's `badge`), said by the same code that says them to people."""
    global _chosen  # noqa: PLW0603 - restored on the way out
    before, _chosen = _chosen, "en"
    try:
        yield
    finally:
        _chosen = before


def languages() -> tuple[str, ...]:
    """The languages to try, most wanted first: read afresh, since tests and hosts change them.

    English is the messages' own language, so a list stops at it (`LANGUAGE=en:tr` is English),
    as it stops at the C locale.
    """
    explicit = _chosen or os.environ.get("TASKFS_LANG")
    wanted = [explicit] if explicit else _from_locale()
    found: list[str] = []
    for lang in filter(None, wanted):
        if _base(lang) in SOURCE_LANGUAGES:
            break
        found.append(lang)
    return tuple(found)


def _from_locale() -> list[str]:
    for name in LOCALE_VARIABLES:
        value = os.environ.get(name)
        if value:
            return value.split(":")
    return []


def _base(lang: str) -> str:
    """`tr` of `tr_TR.UTF-8@euro`."""
    for separator in "_.@":
        lang = lang.split(separator, 1)[0]
    return lang


def translate(code: str, template: str) -> str:
    """The template of the named error `code` in the chosen language (English without one)."""
    wanted = languages()
    if not wanted:
        return template
    catalog = _catalogs.get(wanted)
    if catalog is None:
        catalog = _catalogs[wanted] = _load(wanted)
    # The code is the entry's context: two codes sharing a template keep their own translation.
    return catalog.pgettext(code, template)


def text(context: str, english: str) -> str:
    """`english` (a help text, one of click's messages, a summary line) in the chosen language."""
    wanted = languages()
    if not wanted or not english:
        return english
    catalog = _catalogs.get(wanted)
    if catalog is None:
        catalog = _catalogs[wanted] = _load(wanted)
    return catalog.pgettext(context, english)


def say(english: str, /, **values: object) -> str:
    """A line for people (a summary, a hint) in the chosen language, its `{names}` filled from
    `values`; a translation that cannot be filled gives way to the English. `python -m
    taskfs.catalogs` finds the calls of `say` in the sources: pass the English as a literal."""
    local = {k: getattr(v, "local", v) for k, v in values.items()}  # a `Said`, as it reads
    try:
        return text(TEXT, english).format(**local)
    except (KeyError, IndexError, ValueError, AttributeError):
        return english.format(**values)


class Said(str):
    """A line in English (what data keeps: a problem's `reason`) that also knows how it reads
    in the chosen language (`local`), for the message a person reads (`errors.problem`)."""

    local: str


def said(english: str, /, **values: object) -> Said:
    """`say`, keeping the English: the value is the English line, its `local` the line in the
    chosen language. For text passed into a named error's message as data (a reason), which
    stays English in the document while the message reads in the user's language."""
    found = Said(english.format(**values))
    found.local = say(english, **values)
    return found


def _load(wanted: tuple[str, ...]) -> NullTranslations:
    import gettext

    return gettext.translation(DOMAIN, LOCALE_DIR, languages=list(wanted), fallback=True)
