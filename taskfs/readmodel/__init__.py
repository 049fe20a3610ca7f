"""The read model: the projection of the ledger that the cache stores, and the fast path.

A task exists in two forms. The full reader (`taskfs.store.task_reader`: pydantic `Envelope`, the
status chain, problems named) is the truth; the projection (`projection.Summary`) is what the
rules and the listings need of it, with named fields, cheap to build and to load. This package
holds everything that reads or stores the projection without the full reader:

- `stamps`: the identities (`stat` keys, digests) a stored answer is checked against, and
  finding the checkout;
- `projection`: the projection (`Summary`, `Facts`), its one converter from the full reader
  and its one serialisation to the cache's plain values;
- `cache`: the ledger cache file (`ledger-vN`): its rows and their serialisation. What decides
  and writes the rows, under the lock, is `taskfs.store.index`;
- `prepared`: the answers of `ls --json` and `ready --json`, built from the projection when
  the cache is written, and read back by `taskfs.cli.fast` with a `stat` per file;
- `show`: the answers of `show ID`, stored by the full reader and read back the same way.

It imports only the leaves (`taskfs.core`, `taskfs.errors`, `taskfs.i18n`), so that the fast
path loads nothing else; `tests/test_startup.py` proves what each fast command imports.
"""
