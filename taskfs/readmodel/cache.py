"""The files under `<git dir>/taskfs/cache/` other than the store: one format, one freshness
rule (issue 36).

Each is one value derived from the ledger or the settings (`show` answers, what the completion
gate read of evidence files, the settings a command needs without the settings' model),
stored under the key of what it was derived from, and sealed (`taskfs.readmodel.seal`). The
rule: a value answers only while its seal holds and the key it was stored under is the key of
its sources now: git's object ids where the sources are in git (HEAD's view of a task, a
file's blob id), the bytes' digest or, while it is old enough to be trusted, the `stat`
identity of a file that is not (`taskfs.readmodel.stamps`). Anything else (no file, another
version's, one cut short, garbage, a byte flipped, a value rewritten by hand) is no value: the
caller derives it again and stores it anew. Deleting any of them changes nothing but time.

Imports nothing but `os`, `marshal` and this package's `seal` and `stamps`.
"""

from __future__ import annotations

import marshal
import os

from taskfs import __version__
from taskfs.readmodel import seal
from taskfs.readmodel.stamps import cache_dir

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FORMAT = 1


def path(git_dir: str, kind: str, name: str) -> str:
    return f"{cache_dir(git_dir)}/{kind}/{name}"


def _context(kind: str, name: str) -> bytes:
    return f"file\0{kind}\0{name}".encode()


def recall(git_dir: str, kind: str, name: str, key: Any) -> Any:
    """The value stored as `kind`/`name` under `key`; None when there is none that holds."""
    try:
        with open(path(git_dir, kind, name), "rb") as handle:
            blob = handle.read()
        data = seal.unwrap(_context(kind, name), blob)
        if data is None:
            return None
        fields = marshal.loads(data)
        if type(fields) is not tuple or len(fields) != 4:
            return None
        stored, version, stored_key, value = fields
        if stored != FORMAT or version != __version__ or stored_key != key:
            return None
        return value
    except Exception:  # unreadable, or not what this version wrote: derived again
        return None


def remember(git_dir: str, kind: str, name: str, key: Any, value: Any) -> None:
    """Store `value` as `kind`/`name` under `key`, sealed and atomically; nothing when it
    cannot be (no key, a checkout that cannot be written: only speed is lost)."""
    try:
        data = marshal.dumps((FORMAT, __version__, key, value))
    except ValueError:
        return
    blob = seal.wrap(_context(kind, name), data)
    if blob is None:
        return
    write(path(git_dir, kind, name), blob)


def forget(git_dir: str, kind: str, name: str) -> None:
    try:
        os.unlink(path(git_dir, kind, name))
    except OSError:
        return


def write(where: str, blob: bytes) -> None:
    """Write `blob` to `where` atomically; left unwritten when it cannot be."""
    tmp = f"{where}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(where), exist_ok=True)
        with open(tmp, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, where)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            return
