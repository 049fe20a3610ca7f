"""The read model: everything taskfs derives from the ledger, in one home (issue 36).

A task exists in two forms. The full reader (`taskfs.store.task_reader`: pydantic `Envelope`, the
status chain, problems named) is the truth; the projection (`projection.Summary`) is what the
rules and the listings need of it, with named fields, cheap to build and to load. This package
owns everything derived from the ledger and kept under `<git dir>/taskfs/cache/`, and every
way it is read and written:

- `seal`: the key every derived file is sealed with (kept outside every repository), so that
  nothing there is used unless this checkout's taskfs wrote it;
- `cache`: the files beside the store (stored `show` answers, the completion gate's facts,
  the settings a command needs without their model), with the one freshness rule;
- `db`: the store (SQLite), its schema and every query and write; `view`: its content read
  as its sealed root names it, and a change to it; `ledger`: the ledger as the rules read it,
  row by row; `rows`: keeping the derived relations and readiness right as rows change;
  `listing`: what `ls` and `ready` list, and the fast path's answers; `filters`: a listing's
  filters, applied in one place;
- `projection`, `archive`, `show`, `gate`, `stamps`: the projection and its one serialisation,
  the archive's rows, `show` answers, evidence facts, and the identities answers are keyed by.

What reads the ledger's files and git to fill the store is `taskfs.store.index` and
`taskfs.store.readmodel_store`; they hand values in, and this package keeps them.

It imports only the leaves (`taskfs.core`, `taskfs.errors`, `taskfs.i18n`), so that the fast
path loads nothing else; `tests/test_startup.py` proves what each fast command imports.
"""
