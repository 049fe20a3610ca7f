"""Which paths of the tasks folder the watcher cares about, decided on names alone (pure).

Paths are relative to the tasks folder, split into parts. A drop is `<name>.yaml` at the top
(not hidden, not a report) or `<folder>/envelope.yaml`; its refusal report is the same name
with `+refused.yaml` in place of `.yaml`. A `+` is in no task id and in no drop's report but
its own, so a report never lands on a task folder or another drop's report (the earlier
`.refused.yaml` could: `tasks/y.yaml` and a task `y.refused.yaml`); reports of that older
spelling are still recognised, and removed with their drops. Editors' temporary files never
look like drops: `.#x` and `.x.swp` are hidden, `x~`, `4913` and `#x#` do not end in
`.yaml`, and an atomic save arrives as a move whose destination is the real name.
"""

from __future__ import annotations

from collections.abc import Sequence

SUFFIX = ".yaml"
REPORT_SUFFIX = "+refused.yaml"
LEGACY_REPORT_SUFFIX = ".refused.yaml"  # what watchers before issue 16 wrote
ENVELOPE = "envelope.yaml"
MESSAGES = "messages"


def is_drop(parts: Sequence[str]) -> bool:
    if len(parts) == 1:
        name = parts[0]
        return _visible(name) and name.endswith(SUFFIX) and not _report_named(name)
    return len(parts) == 2 and _visible(parts[0]) and parts[1] == ENVELOPE


def is_report(parts: Sequence[str]) -> bool:
    if len(parts) == 1:
        return _visible(parts[0]) and _report_named(parts[0])
    return (
        len(parts) == 2
        and _visible(parts[0])
        and parts[1] in (report_name(ENVELOPE), legacy_report_name(ENVELOPE))
    )


def _report_named(name: str) -> bool:
    return name.endswith(REPORT_SUFFIX) or name.endswith(LEGACY_REPORT_SUFFIX)


def report_name(drop_name: str) -> str:
    return drop_name.removesuffix(SUFFIX) + REPORT_SUFFIX


def legacy_report_name(drop_name: str) -> str:
    return drop_name.removesuffix(SUFFIX) + LEGACY_REPORT_SUFFIX


def drop_name(report: str) -> str:
    if report.endswith(REPORT_SUFFIX):
        return report.removesuffix(REPORT_SUFFIX) + SUFFIX
    return report.removesuffix(LEGACY_REPORT_SUFFIX) + SUFFIX


def is_hint(parts: Sequence[str], is_dir: bool) -> bool:
    """Whether an event on this path may mean work: a drop written, moved in or removed, a
    folder arriving (its files may come without events of their own), or a message."""
    if not parts or not all(_visible(p) for p in parts):
        return False
    if is_dir:
        return len(parts) == 1
    if is_drop(parts):
        return True
    return len(parts) == 3 and parts[1] == MESSAGES and parts[2].endswith(SUFFIX)


def _visible(name: str) -> bool:
    return bool(name) and not name.startswith(".")
