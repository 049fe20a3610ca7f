"""The one package that talks to git, split by job:

- `process`: running git (the scrubbed environment, errors, one-line questions);
- `objects`: blobs, trees and commits, and the ledger's commits built from them (the write
  path: no GitPython here);
- `history`: what commits did, through the one `git log` parser;
- `worktree`: the index and the working tree (what is uncommitted, staged, in the way);
- `remotes`: fetch, push and merging two tips (`taskfs sync`);
- `session`: GitPython, opened once by the long history readers (`audit`, `review`, `sync`).

`Git` is a checkout with all of these but the session, which costs an import that the fast
paths (`ls`, `ready`, `claim`, ...) must not pay.
"""

from __future__ import annotations

from taskfs.store.git.remotes import Remotes
from taskfs.store.git.worktree import Worktree


class Git(Worktree, Remotes):
    """A git working tree, driven through the git command line."""
