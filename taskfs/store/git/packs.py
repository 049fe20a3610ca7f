"""Writing many new objects as one pack (issue 36), where each loose object is a file of its own.

A `new` of a thousand envelopes makes some two thousand trees; written loose, each is a file to
create, write and rename, most of the commit's own time on a busy disk. Written as one pack
with its index, they are two files. The pack holds whole objects (no deltas), in git's pack
format version 2 and index format version 2, hashed with the repository's object format (SHA-1
or SHA-256); git finds a pack by its index, so the pack is in place first. Duplicates of objects
git has elsewhere are allowed (git reads either), and `git gc` repacks it like any other.
"""

from __future__ import annotations

import os
import struct
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

TYPES = {"commit": 1, "tree": 2, "blob": 3, "tag": 4}
PACKED_FROM = 256  # fewer objects are written loose, as git writes a commit's
_OFFSET_LIMIT = 1 << 31  # a 4-byte offset of index version 2 (no large offsets written here)


def put(
    objects: dict[str, tuple[str, bytes]], new_hash: Callable[..., Any], kind: str, body: bytes
) -> str:
    """Add an object of `kind` to `objects` (to be written by `write_all`); its id."""
    oid: str = new_hash(f"{kind} {len(body)}\0".encode() + body).hexdigest()
    objects[oid] = (kind, body)
    return oid


def write_all(
    objects_dir: Path,
    objects: Mapping[str, tuple[str, bytes]],
    new_hash: Callable[..., Any],
    write_loose: Callable[[str, bytes], str],
    durable: bool,
) -> None:
    """Write `objects` (object id -> (kind, body)): each loose (`write_loose`), or, from
    `PACKED_FROM` of them, as one pack (`write_pack`)."""
    if len(objects) < PACKED_FROM:
        for kind, body in objects.values():
            write_loose(kind, body)
        return
    write_pack(objects_dir, objects, new_hash, durable=durable)


def write_pack(
    objects_dir: Path,
    objects: Mapping[str, tuple[str, bytes]],
    new_hash: Callable[..., Any],
    *,
    level: int = 1,
    durable: bool = False,
) -> str:
    """Write `objects` (object id -> (kind, body)) as one pack under `objects_dir/pack`; its
    name. `new_hash`: the repository's hash (`hashlib.sha1` or `hashlib.sha256`); `durable`:
    flushed to disk before it is in place (git's `core.fsync`, as for loose objects)."""
    parts = [b"PACK", struct.pack(">II", 2, len(objects))]
    offset = 12
    found: list[tuple[bytes, int, int]] = []  # (id, crc32 of its packed bytes, offset)
    for oid, (kind, body) in objects.items():
        size = len(body)
        header = bytearray()
        byte = (TYPES[kind] << 4) | (size & 0x0F)
        size >>= 4
        while size:
            header.append(byte | 0x80)
            byte = size & 0x7F
            size >>= 7
        header.append(byte)
        packed = bytes(header) + zlib.compress(body, level)
        if offset >= _OFFSET_LIMIT:
            raise ValueError("a pack too large for this writer")
        found.append((bytes.fromhex(oid), zlib.crc32(packed), offset))
        parts.append(packed)
        offset += len(packed)
    content = b"".join(parts)
    checksum = new_hash(content).digest()
    found.sort()
    counts = [0] * 256
    for oid_bytes, _crc, _offset in found:
        counts[oid_bytes[0]] += 1
    fanout = []
    total = 0
    for count in counts:
        total += count
        fanout.append(total)
    index = b"".join(
        [
            b"\377tOc",
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            *(oid_bytes for oid_bytes, _crc, _offset in found),
            *(struct.pack(">I", crc) for _oid, crc, _offset in found),
            *(struct.pack(">I", at) for _oid, _crc, at in found),
            checksum,
        ]
    )
    index += new_hash(index).digest()
    name = f"pack-{checksum.hex()}"
    folder = objects_dir / "pack"
    folder.mkdir(parents=True, exist_ok=True)
    _place(folder / f"{name}.pack", content + checksum, durable)
    _place(folder / f"{name}.idx", index, durable)  # git finds a pack by its index: last
    return name


def _place(target: Path, data: bytes, durable: bool) -> None:
    tmp = target.with_name(f"tmp_{target.name}_{os.getpid()}")
    with open(tmp, "wb") as handle:
        handle.write(data)
        if durable:
            handle.flush()
            os.fsync(handle.fileno())
    os.chmod(tmp, 0o444)
    os.replace(tmp, target)
