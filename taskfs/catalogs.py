"""The translation catalogs: the template made from `MESSAGES`, `.po` files read, `.mo` written.

A tool for maintainers, never imported when taskfs runs: `python -m taskfs.catalogs` rewrites
`locale/taskfs.pot` from the table of named errors and compiles every
`locale/<lang>/LC_MESSAGES/taskfs.po` into the `.mo` beside it. Each entry's `msgctxt` is its
error code. The `.po` files are the source of truth; GNU gettext's tools (`msgmerge`, `msgfmt
-c`) and editors such as Poedit read and write them too. The compiler follows CPython's
`Tools/i18n/msgfmt.py` (no hash table, entries sorted, fuzzy and obsolete ones left out) and
writes the bytes GNU `msgfmt --no-hash` writes.
"""

from __future__ import annotations

import ast
import re
import struct
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from taskfs.errors import MESSAGES
from taskfs.i18n import CLICK, DOMAIN, HELP, LOCALE_DIR, TEXT, TOOLS

TEMPLATE = Path(LOCALE_DIR) / f"{DOMAIN}.pot"
WIDTH = 79
HEADER = {
    "Project-Id-Version": "taskfs",
    "MIME-Version": "1.0",
    "Content-Type": "text/plain; charset=UTF-8",
    "Content-Transfer-Encoding": "8bit",
}


@dataclass(frozen=True)
class Entry:
    context: str | None
    msgid: str
    msgstr: str
    fuzzy: bool = False
    comment: str = ""


class PoError(ValueError):
    """A `.po` file this reader does not understand, with the line it stopped at."""


def pot_text(messages: Mapping[str, str] = MESSAGES) -> str:
    """The template: every named error's English message, its code as the context; then the
    command line's help (`help:command`), click's own messages (`click:usage`), the lines
    for people that the sources pass to `i18n.say` (`text:summary`) and what `taskfs mcp`
    lists for a model (`mcp:tools`)."""
    header = "".join(f"{key}: {value}\n" for key, value in HEADER.items())
    entries = [Entry(None, "", header, comment="# Messages of taskfs's named errors.")]
    entries += [
        Entry(code, template, "", comment="#, python-brace-format")
        for code, template in messages.items()
    ]
    entries += [Entry(HELP, text, "") for text in help_texts()]
    entries += [Entry(CLICK, text, "") for text in click_messages()]
    entries += [Entry(TEXT, text, "", comment="#, python-brace-format") for text in said()]
    entries += [Entry(TOOLS, text, "") for text in tool_texts()]
    return write_po(entries)


def help_texts() -> list[str]:
    """The help of every command and option, in English."""
    from taskfs.cli.app import cli
    from taskfs.cli.localize import english_help

    return english_help(cli)


def tool_texts() -> list[str]:
    """What `tools/list` tells a model, in English: the server's instructions, then each tool's
    description and its parameters' (the server is built, never started)."""
    from taskfs import i18n
    from taskfs.mcp.server import INSTRUCTIONS, build
    from taskfs.mcp.tools import Session

    with i18n.in_english():
        tools = build(Session(None, Path.cwd()))
    found = [INSTRUCTIONS]
    for tool in tools.server._tool_manager.list_tools():
        found.append(tool.description or "")
        properties = tool.parameters.get("properties", {})
        found += [p["description"] for p in properties.values() if p.get("description")]
    return list(dict.fromkeys(t for t in found if t))


def click_messages() -> list[str]:
    """The messages click passes to gettext (`_(...)`, `ngettext(...)`), in its own order."""
    import click

    found: list[str] = []
    for path in sorted(Path(click.__file__).parent.glob("*.py")):
        found += _literal_calls(path.read_text(encoding="utf-8"), ("_", "ngettext"))
    # Passed to `_` through a variable: `_(extra["required"])` in an option's help.
    found.append("required")
    return list(dict.fromkeys(found))


def said() -> list[str]:
    """The English of every `i18n.say("...")` (and `i18n.said`) in taskfs's sources."""
    found: list[str] = []
    for path in sorted(Path(__file__).parent.rglob("*.py")):
        found += _literal_calls(path.read_text(encoding="utf-8"), ("i18n.say", "i18n.said"))
    return list(dict.fromkeys(found))


def _literal_calls(source: str, names: tuple[str, ...]) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name):
            name = func.id
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            name = f"{func.value.id}.{func.attr}"
        else:
            continue
        if name not in names:
            continue
        for arg in node.args[: 2 if name == "ngettext" else 1]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value:
                found.append(arg.value)
    return found


def write_po(entries: list[Entry]) -> str:
    blocks = []
    for entry in entries:
        lines = [entry.comment] if entry.comment else []
        if entry.context is not None:
            lines += _field("msgctxt", entry.context)
        lines += _field("msgid", entry.msgid) + _field("msgstr", entry.msgstr)
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _field(keyword: str, value: str) -> list[str]:
    """`keyword "value"`, wrapped the way msgmerge wraps: at spaces, within WIDTH columns."""
    one = f"{keyword} {_quote(value)}"
    if len(one) <= WIDTH and "\n" not in value[:-1]:
        return [one]
    pieces: list[str] = []
    for line in re.findall(r"[^\n]*\n|[^\n]+", value):
        pieces += _wrap(line)
    return [f'{keyword} ""'] + [_quote(piece) for piece in pieces]


def _wrap(text: str) -> list[str]:
    pieces: list[str] = []
    current = ""
    for token in re.findall(r"[^ ]+ *| +", text):
        if current and len(_quote(current + token)) > WIDTH:
            pieces.append(current)
            current = token
        else:
            current += token
    return [*pieces, current] if current else pieces


# The C escapes a .po string uses; other characters are written as they are.
ESCAPES = {
    **{char: "\\" + char for char in '\\"'},
    **{char: "\\" + name for char, name in zip("\n\t\r\f\v\a\b", "ntrfvab", strict=True)},
}


def _quote(text: str) -> str:
    return '"' + "".join(ESCAPES.get(char, char) for char in text) + '"'


def read_po(text: str) -> list[Entry]:
    """The entries of a `.po` file; obsolete (`#~`) ones are dropped, fuzzy ones marked."""
    entries: list[Entry] = []
    fields: dict[str, str] = {}
    last: str | None = None
    flags: set[str] = set()

    def finish() -> None:
        nonlocal fields, flags, last
        if "msgid" in fields:
            if "msgstr" not in fields:
                raise PoError(f"the entry {fields['msgid']!r} has no msgstr")
            entries.append(
                Entry(fields.get("msgctxt"), fields["msgid"], fields["msgstr"], "fuzzy" in flags)
            )
        elif fields:
            raise PoError(f"an entry without msgid: {sorted(fields)}")
        fields, flags, last = {}, set(), None

    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip(" \t\r")
        if line.startswith("#"):
            if fields and "msgstr" in fields:
                finish()
            if line.startswith("#,"):
                flags.update(flag.strip() for flag in line[2:].split(","))
            continue
        if not line:
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            if last is None:
                raise PoError(f"line {number}: a string that continues nothing")
            fields[last] += _unquote(line, number)
            continue
        if keyword not in ("msgctxt", "msgid", "msgstr"):
            raise PoError(f"line {number}: {keyword} is not supported (taskfs has no plurals)")
        if keyword in ("msgctxt", "msgid") and "msgstr" in fields:
            finish()
        if keyword in fields:
            raise PoError(f"line {number}: a second {keyword} in one entry")
        fields[keyword] = _unquote(rest.strip(), number)
        last = keyword
    finish()
    return entries


def _unquote(text: str, number: int) -> str:
    if not (len(text) >= 2 and text[0] == text[-1] == '"'):
        raise PoError(f"line {number}: {text!r} is not a quoted string")
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError) as exc:
        raise PoError(f"line {number}: {text!r}: {exc}") from None
    if not isinstance(value, str):
        raise PoError(f"line {number}: {text!r} is not a string")
    return value


def compile_mo(entries: list[Entry]) -> bytes:
    """The binary catalog gettext reads: translated, non-fuzzy entries (and the header)."""
    table: dict[bytes, bytes] = {}
    for entry in entries:
        if entry.fuzzy or (entry.msgid and not entry.msgstr):
            continue
        # gettext looks an entry with a context up as "context\x04msgid".
        lookup = entry.msgid if entry.context is None else f"{entry.context}\x04{entry.msgid}"
        table[lookup.encode()] = entry.msgstr.encode()
    keys = sorted(table)
    ids = strs = b""
    spans = []
    for key in keys:
        spans.append((len(ids), len(key), len(strs), len(table[key])))
        ids += key + b"\0"
        strs += table[key] + b"\0"
    key_start = 7 * 4 + 16 * len(keys)
    value_start = key_start + len(ids)
    key_offsets: list[int] = []
    value_offsets: list[int] = []
    for id_at, id_len, str_at, str_len in spans:
        key_offsets += [id_len, id_at + key_start]
        value_offsets += [str_len, str_at + value_start]
    offsets = key_offsets + value_offsets
    # No hash table (gettext falls back to binary search); its offset is where GNU msgfmt
    # --no-hash puts it, so that the two compilers give the same bytes.
    head = struct.pack("<7I", 0x950412DE, 0, len(keys), 7 * 4, 7 * 4 + len(keys) * 8, 0, key_start)
    return head + struct.pack(f"<{len(offsets)}I", *offsets) + ids + strs


def po_files() -> list[Path]:
    return sorted(Path(LOCALE_DIR).glob(f"*/LC_MESSAGES/{DOMAIN}.po"))


def main() -> int:
    TEMPLATE.write_text(pot_text(), encoding="utf-8")
    for po in po_files():
        po.with_suffix(".mo").write_bytes(compile_mo(read_po(po.read_text(encoding="utf-8"))))
        sys.stdout.write(f"{po.with_suffix('.mo')}\n")
    sys.stdout.write(f"{TEMPLATE}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
