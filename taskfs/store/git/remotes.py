"""Exchanging the ledger with a remote (`taskfs sync`): fetch, push, and the merge of two
tips computed without touching the checkout."""

from __future__ import annotations

from taskfs.store.git.process import Process, git_error


class Remotes(Process):
    """A checkout's remotes."""

    def remotes(self) -> list[str]:
        return self.run("remote").split()

    def fetch(self, remote: str, branch: str) -> str | None:
        """Fetch `branch` of `remote` into its remote-tracking ref and return its commit; None
        when the remote has no such branch yet."""
        tracking = f"refs/remotes/{remote}/{branch}"
        proc = self.run_raw(
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            remote,
            f"+refs/heads/{branch}:{tracking}",
        )
        if proc.returncode != 0:
            if b"couldn't find remote ref" in proc.stderr:
                return None
            raise git_error(("fetch",), proc)
        return self.run("rev-parse", "--verify", f"{tracking}^{{commit}}")

    def tracking(self, remote: str, branch: str) -> str | None:
        """The commit the remote-tracking ref of `branch` of `remote` holds; None if none."""
        return self.verify(f"refs/remotes/{remote}/{branch}")

    def tracked_refs(self) -> list[str]:
        """Every remote-tracking ref (`refs/remotes/R/B`), but the symbolic `R/HEAD`s."""
        out = self.run("for-each-ref", "--format=%(refname) %(symref)", "refs/remotes")
        return [ref for ref, _sp, symref in (line.partition(" ") for line in out.splitlines())
                if ref and not symref]  # fmt: skip

    def dropped(self, ref: str, tip: str | None, folder: str, also: str | None = None) -> list[str]:
        """The commits touching `folder` that HEAD holds and that `ref` once held (its reflog,
        and `also`: its value before a fetch), but `tip` (its value now) does not: what a
        rewrite of the remote's history (a forced push) took away from under this clone.
        Newest first; empty when every value `ref` had is in `tip`, the way of every plain
        push and fetch."""
        head = self.head()
        if tip is None or head is None:
            return []
        log = self.run_raw("reflog", "show", "--format=%H", "--end-of-options", ref, "--")
        past = set(log.stdout.decode().split()) if log.returncode == 0 else set()
        past |= {also} if also else set()
        past.discard(tip)
        if not past:
            return []
        # A value whose commits were since pruned is passed over (--ignore-missing).
        selection = ("rev-list", "--no-merges", "--full-history", "--ignore-missing", "--stdin")
        once = self.run(*selection, "--", folder, input="\n".join([*past, f"^{tip}"]).encode())
        if not once:
            return []
        mine = set(self.run(*selection, "--", folder, input=f"{head}\n^{tip}".encode()).split())
        return [commit for commit in once.split() if commit in mine]

    def push(self, remote: str, commit: str, branch: str) -> str | None:
        """Push `commit` to `branch` of `remote` (never forced). None when it landed, else git's
        reason for refusing it; a failure to reach the remote raises."""
        proc = self.run_raw("push", "--porcelain", remote, f"{commit}:refs/heads/{branch}")
        refused = [
            line.split("\t")[-1]
            for line in proc.stdout.decode("utf-8", "replace").splitlines()
            if line.startswith("!\t")
        ]
        if proc.returncode == 0 and not refused:
            self.run("update-ref", f"refs/remotes/{remote}/{branch}", commit)
            return None
        if refused:
            return "; ".join(refused)
        raise git_error(("push",), proc)

    def merge_tree(self, ours: str, theirs: str) -> tuple[str, list[str]]:
        """The tree `git merge` would make of two commits, and the paths that conflict; the
        repository, its index and working tree are left untouched."""
        proc = self.run_raw(
            "merge-tree", "--write-tree", "--name-only", "-z", "--no-messages", ours, theirs
        )
        if proc.returncode not in (0, 1):
            raise git_error(("merge-tree",), proc)
        tree, *paths = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        return tree.strip(), sorted({p for p in paths if p})
