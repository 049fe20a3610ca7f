"""One pass of the watcher over the tasks folder, without threads: what is there now decides
what is done, whatever events led here.

A pass looks at every dropped file. One that two looks found unchanged is handed to the
intake (`api.intake.take_in`) in batches; one still changing waits for the next pass. The
answers become refusal reports and log lines. Reports whose file is gone are removed. Then the
check requests that wait are answered (`api.check_requests`).

Nothing a file holds stops a pass: a refusal is an answer, an unexpected error in one file is
logged and that file is left alone until it changes, and a batch that hits one is retried file
by file so that the others still go in.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from taskfs.api.context import read_dropped, replace_file
from taskfs.api.evidence.requests import (
    CheckOutcome,
    pending_check_requests,
    run_requested_check,
)
from taskfs.api.intake.drops import IntakeIndex, Taken, digest, in_place_id, take_in
from taskfs.core import layout
from taskfs.core.layout import format_time
from taskfs.core.policy import RunnerPolicy
from taskfs.errors import Problem, TaskfsError
from taskfs.watch.log import ActionLog
from taskfs.watch.reports import report_bytes, report_sha256
from taskfs.watch.scan import scan
from taskfs.watch.settle import Look, Settler

if TYPE_CHECKING:
    from taskfs.api.context import Repository

# Tells the event filter which changes the watcher itself is about to cause: (removed paths,
# written paths), repository-relative.
Expect = Callable[[Sequence[str], Sequence[str]], None]


@dataclass(frozen=True)
class Settings:
    settle: float = 0.25  # seconds between the two looks that must agree
    batch: int = 200  # dropped files per intake (one lock hold, one commit per sender)


@dataclass(frozen=True)
class PassResult:
    waiting: tuple[str, ...]  # files still being written (or not yet looked at twice)
    due: float | None  # seconds until the first of them can be ready
    failed: int  # files or requests that hit an error other than a refusal
    stopped: bool  # the pass stopped early because a stop was asked for


def report_rel(drop: str) -> str:
    path = PurePosixPath(drop)
    return str(path.with_name(layout.report_name(path.name)))


def drop_rel(report: str) -> str:
    path = PurePosixPath(report)
    return str(path.with_name(layout.drop_name(path.name)))


class Reconciler:
    def __init__(
        self,
        repo: Repository,
        log: ActionLog,
        policy: RunnerPolicy,
        settings: Settings = Settings(),
        *,
        clock: Callable[[], float] = time.monotonic,
        stopping: Callable[[], bool] = lambda: False,
        expect: Expect = lambda removed, written: None,
    ) -> None:
        self.repo = repo
        self.log = log
        self.policy = policy
        self.settings = settings
        self.clock = clock
        self.stopping = stopping
        self.expect = expect
        self.index = IntakeIndex()
        self.settler = Settler(settings.settle)
        self._known_tasks: set[str] = set()
        self._broken: dict[str, Look] = {}  # files that hit an unexpected error, as they were
        self._refused: dict[str, tuple[Look, str]] = {}  # file -> (look, sha256) when refused
        self._answered: set[str] = set()
        self._failed = 0

    def pass_(self, *, full: bool = False) -> PassResult:
        """Look at everything once and act on what is ready; `full` forgets what was cached
        about task folders (the periodic rescan)."""
        if full:
            self._known_tasks.clear()
        self._failed = 0
        found = scan(self.repo, self._known_tasks)
        for leftover in found.leftovers:
            leftover.unlink(missing_ok=True)  # a report whose writing was killed
        now = self.clock()
        self.settler.keep_only(found.drops)
        for memory in (self._broken, self._refused):
            for gone in [rel for rel in memory if rel not in found.drops]:
                del memory[gone]
        ready: list[tuple[str, Look]] = []
        waiting: list[str] = []
        for rel, look in sorted(found.drops.items()):
            if not self.settler.ready(rel, look, now):
                waiting.append(rel)
            elif self._broken.get(rel) != look and not self._still_refused(
                rel, look, found.reports
            ):
                ready.append((rel, look))
        stopped = False
        for start in range(0, len(ready), self.settings.batch):
            if self.stopping():
                stopped = True
                break
            self._take(ready[start : start + self.settings.batch])
        if not stopped:
            self._clear_orphans(found.reports)
            stopped = self._answer_checks()
        due = min((self.settler.due(rel, now) for rel in waiting), default=None)
        return PassResult(tuple(waiting), due, self._failed, stopped)

    # -- intake --------------------------------------------------------------------------

    def _take(self, chunk: Sequence[tuple[str, Look]]) -> None:
        try:
            results = take_in(self.repo, [rel for rel, _ in chunk], self.index)
        except TaskfsError as exc:
            # The repository cannot be written just now (git failed, the config broke): try
            # again on the next pass.
            self._failed += len(chunk)
            self.log("error", files=len(chunk), errors=_codes(exc.problems), reason=str(exc))
            return
        except Exception as exc:
            if len(chunk) > 1:
                for item in chunk:
                    self._take([item])
                return
            rel, look = chunk[0]
            self._broken[rel] = look
            self._failed += 1
            self.log("error", path=rel, reason=f"{type(exc).__name__}: {exc}")
            return
        for taken, (_rel, look) in zip(results, chunk, strict=True):
            self._record(taken, look)

    def _record(self, taken: Taken, look: Look) -> None:
        rel = taken.path
        self._refused.pop(rel, None)
        if taken.outcome in ("submitted", "already"):
            task = f"{self.repo.tasks_rel}/{taken.id}"
            consumed = [rel] if in_place_id(self.repo, rel) is None else []
            self.expect(consumed, [task, f"{task}/{layout.ENVELOPE}"])
            self._remove_report(rel)
            commit = taken.commit[:12] if taken.commit else None
            action = "submitted" if taken.outcome == "submitted" else "already-submitted"
            self.log(action, path=rel, id=taken.id, commit=commit)
        elif taken.outcome == "refused":
            report = report_rel(rel)
            at = format_time(datetime.now(timezone.utc))
            data = report_bytes(rel, taken.sha256, taken.problems, at)
            try:
                replace_file(self.repo.root / report, data)
            except OSError as exc:
                # Something that is not a report stands in its place: say so and go on.
                self._failed += 1
                reason = f"the refusal report cannot be written: {exc.strerror or exc}"
                self.log("refused", path=rel, errors=_codes(taken.problems), reason=reason)
                return
            self._remove_legacy_report(rel)
            if taken.sha256 is not None:
                self._refused[rel] = (look, taken.sha256)
            self.log("refused", path=rel, errors=_codes(taken.problems), report=report)
        elif taken.outcome == "failed":
            self._failed += 1
            self.log("error", path=rel, errors=_codes(taken.problems) or None)
        else:
            self.log.debug("gone", path=rel)

    def _still_refused(self, rel: str, look: Look, reports: set[str]) -> bool:
        """Whether `rel` holds the very bytes its refusal report was written for."""
        report = report_rel(rel)
        if report not in reports:
            return False
        cached = self._refused.get(rel)
        if cached is not None and cached[0] == look:
            sha: str | None = cached[1]
        else:
            try:
                data = read_dropped(self.repo.root, rel)
            except TaskfsError:
                return False
            sha = None if data is None else digest(data)
        try:
            written_for = report_sha256((self.repo.root / report).read_bytes())
        except OSError:
            return False
        if sha is not None and sha == written_for:
            self._refused[rel] = (look, sha)
            return True
        return False

    def _remove_report(self, rel: str) -> None:
        report = self.repo.root / report_rel(rel)
        if report.is_file():
            report.unlink(missing_ok=True)
            self.log("report-removed", path=report_rel(rel), reason="submitted")
        self._remove_legacy_report(rel)

    def _remove_legacy_report(self, rel: str) -> None:
        """A report of the older spelling beside `rel` (only a file: a task folder may bear
        that name)."""
        path = PurePosixPath(rel)
        legacy = str(path.with_name(layout.legacy_report_name(path.name)))
        target = self.repo.root / legacy
        if target.is_file() and not target.is_symlink():
            target.unlink(missing_ok=True)
            self.log("report-removed", path=legacy, reason="replaced")

    def _clear_orphans(self, reports: Iterable[str]) -> None:
        for report in sorted(reports):
            drop = self.repo.root / drop_rel(report)
            if not drop.exists() and not drop.is_symlink():
                with contextlib.suppress(IsADirectoryError, PermissionError):
                    (self.repo.root / report).unlink(missing_ok=True)
                self.log("report-removed", path=report, reason="its file is gone")

    # -- check requests ------------------------------------------------------------------

    def _answer_checks(self) -> bool:
        """Answer each check request once; True when a stop cut this short."""
        try:
            requests = pending_check_requests(self.repo)
        except Exception as exc:
            self._failed += 1
            self.log("check-error", stage="pending", reason=f"{type(exc).__name__}: {exc}")
            return False
        for request in requests:
            if request.key in self._answered:
                continue
            if self.stopping():
                return True
            self._answered.add(request.key)
            try:
                outcome = run_requested_check(self.repo, request, self.policy)
            except TaskfsError as exc:
                self._failed += 1
                self.log("check-error", task=request.task_id, errors=_codes(exc.problems))
                continue
            except Exception as exc:
                self._failed += 1
                self.log("check-error", task=request.task_id, reason=f"{type(exc).__name__}: {exc}")
                continue
            self._log_outcome(outcome)
        return False

    def _log_outcome(self, outcome: CheckOutcome) -> None:
        request = outcome.request
        if not outcome.ran:
            reasons = "; ".join(p.message for p in outcome.problems)
            self.log(
                "check-not-run",
                task=request.task_id,
                errors=_codes(outcome.problems),
                request=request.source,
                reason=reasons,
                answered=outcome.answered,
            )
            return
        self.log(
            "checked",
            task=request.task_id,
            verdict=outcome.verdict,
            evidence=outcome.evidence,
            completed="yes" if outcome.completed else "no",
            errors=_codes(outcome.problems) or None,
            reason=None
            if outcome.completed or outcome.problems or outcome.verdict != "pass"
            else "the runner policy leaves completing to the holder (complete: true allows it)",
        )


def _codes(problems: Iterable[Problem]) -> str:
    return ",".join(p.code for p in problems)
