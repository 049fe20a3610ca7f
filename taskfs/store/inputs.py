"""Reading what a user hands taskfs: a file named on the command line, or stdin (`-`).

One reader for every command, so that none of them can be made to read without end or to wait
for ever. A named file must be a regular file: a FIFO with no writer would block, `/dev/zero`
never ends, a directory makes no sense (`file_unreadable`). It is opened without blocking and
then looked at (fstat), so it cannot be swapped between the look and the read. Stdin may also
be a pipe, a socket or a terminal. At most one byte past the limit is read: past it is
`input_too_large` (docs/errors.md lists the limits).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import BinaryIO

from taskfs.errors import TaskfsError, fail

MIB = 1024 * 1024
# The limits of what each command reads (docs/errors.md, `input_too_large`). An envelope's is
# `taskfs.core.yamlio.MAX_BYTES` (1 MiB), and over it is `yaml_invalid` (contract section 2).
SEED_FILE_LIMIT = 4096  # an interlink secret key file: one line of 43 characters
INTERLINK_IMPORT_LIMIT = 16 * MIB  # interlink messages, one per line
MESSAGE_TEXT_LIMIT = MIB  # `send -`: a message is one ledger file, at most 1 MiB
_CHUNK = 64 * 1024


def read_limited(label: str, limit: int, *, stdin: BinaryIO | None = None) -> bytes:
    """The bytes of the file `label`, or of `stdin` when `label` is `-`: at most `limit`,
    `input_too_large` past it, `file_unreadable` for what is not a file."""
    if label == "-" and stdin is not None:
        try:
            fd = stdin.fileno()
        except (OSError, ValueError):  # io.UnsupportedOperation: an in-memory stream
            return _capped(label, limit, stdin.read)
        # Raw reads: a terminal gives one empty read at Ctrl-D, which a buffered read passes over.
        return _capped(label, limit, lambda size: os.read(fd, size), fd)
    fd = open_plain(label)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        return _capped(label, limit, handle.read)


def open_plain(label: str) -> int:
    """A descriptor of the regular file `label`, opened without blocking (a FIFO with no
    writer cannot hang); `file_unreadable` for anything else."""
    try:
        fd = os.open(label, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise fail("file_unreadable", path=_shown(label), reason=exc.strerror or str(exc)) from None
    try:
        refuse_unless_plain(label, fd)
    except TaskfsError:
        os.close(fd)
        raise
    return fd


def refuse_unless_plain(label: str, fd: int) -> None:
    """`file_unreadable` unless `fd` is a regular file, or, for `-` (stdin), a pipe, a socket
    or a terminal someone types into."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError as exc:
        raise fail("file_unreadable", path=_shown(label), reason=exc.strerror or str(exc)) from None
    piped = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)
    if not (stat.S_ISREG(mode) or (label == "-" and piped)):
        reason = f"not a regular file ({_file_kind(mode)}); give a file or pipe the text to -"
        raise fail("file_unreadable", path=_shown(label), reason=reason)


def _capped(
    label: str, limit: int, read: Callable[[int], bytes | None], fd: int | None = None
) -> bytes:
    if fd is not None:
        refuse_unless_plain(label, fd)
    chunks: list[bytes] = []
    size = 0
    try:
        while size <= limit:
            chunk = read(min(_CHUNK, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise fail("file_unreadable", path=_shown(label), reason=exc.strerror or str(exc)) from None
    if size > limit:
        raise fail("input_too_large", path=_shown(label), limit=limit, limit_text=_size(limit))
    return b"".join(chunks)


def _shown(label: str, most: int = 200) -> str:
    """The name said back: a path of thousands of characters is not echoed whole."""
    return label if len(label) <= most else f"{label[:most]}..."


def _size(limit: int) -> str:
    if limit % MIB == 0:
        return f"{limit // MIB} MiB"
    return f"{limit // 1024} KiB" if limit % 1024 == 0 else f"{limit} bytes"


def _file_kind(mode: int) -> str:
    kinds = (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((name for test, name in kinds if test(mode)), "not a plain file")
