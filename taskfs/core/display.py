"""Text shown to a terminal or a model, made safe: the one function every place that prints
calls (`taskfs.cli.output`, the fast paths, the MCP tools' text, the hooks, the logs).

A peer's message, an envelope, a reason or a file name may carry terminal control sequences
(clear the screen, retitle the window, move the cursor up and overwrite a line: hide a
cancellation) and bidirectional overrides that make text read other than it is. What is shown
has each of those characters replaced by its escape, `\\u001b`: visible, and read back as the
same character by JSON. The stored bytes stay as they were sent.

Kept as they are: line feeds and tabs. Replaced: the other C0 controls (carriage return, escape,
backspace, bell, ...), DEL, the C1 controls (U+0080-U+009F: `U+009B` is a one-character CSI for
some terminals), the line and paragraph separators, and the bidirectional marks, embeddings,
overrides and isolates.

Applied to a JSON document (`json.dumps(..., ensure_ascii=False)`) it keeps the document exact:
such characters can only be inside its strings (JSON's own syntax is ASCII, and `json.dumps`
writes C0 controls escaped already), where `\\uXXXX` is their escape, so the document parses to
the same values.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
)


class Styled(str):
    """Text whose control sequences are taskfs's own (a table drawn with colour, every value
    in it made safe first): shown as it is."""

    __slots__ = ()


def safe(text: str) -> str:
    """`text` with every character that could steer a terminal or hide text escaped."""
    if isinstance(text, Styled):
        return text
    return _UNSAFE.sub(_escape, text)


def _escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"
