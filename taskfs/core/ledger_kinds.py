"""Every kind of file the ledger holds, and its one authority rule (issue 35).

Git history is the ledger, and anyone who can write the repository can commit any file. So each
kind of ledger file has one row here: where it lives, who may add it, whether it may ever change
(and by which act it may leave), what it proves, who it names as its writer, how that writer's
signature is made, the audit codes that name a breach of the rule, and the decisions that rest
on it. The same rows drive `audit` (`taskfs.api.review.audit` asks `kind_of` what every path of
history is, and what may happen to it), the writers (`taskfs.store.writer` refuses to commit a
ledger path no row names) and the refusals (each names its rule, `rule: <row name>`);
docs/trust.md shows the table (`markdown_table`), and tests/ledger/test_forgery_matrix.py forges
every row.

The act rules themselves are values and pure functions, shared by the live gate and audit:
`may_revoke` (a key's revocation), `OPERATOR` (who acts when no agent is named). The rest live
with their rows' models: the lifecycle table (`taskfs.core.lifecycle.check_transition`), the
intake's parties (`taskfs.core.intake`), the archive's settings (`archive.by`).

Values in, values out; nothing here reads a disk.
"""

from __future__ import annotations

from typing import NamedTuple

from taskfs.core import layout

# Who acts when no agent is named (the person at the terminal): `taskfs archive`, `keys remove`.
OPERATOR = "operator"
# The name the watcher commits a completion under for the holder, resting on its `result`.
WATCHER = "watcher"


class Kind(NamedTuple):
    """One row of the table."""

    name: str  # the rule's name, as findings and refusals cite it (`rule`)
    where: str  # where such files live
    adds: str  # who may add one
    changes: str  # whether it may change, and which act may remove it
    proves: str  # what it proves (and what it does not)
    actor: str | None  # the field naming its writer
    signed: str  # how its writer signs it, where the writer has a key
    named_by: tuple[str, ...]  # the audit codes that name a breach of the rule
    decides: tuple[str, ...]  # the decisions that rest on it
    live: str = ""  # what those decisions check of it before resting on it
    ledger: bool = True  # False: a file in the repository that is not part of the ledger
    immutable: bool = True  # audit names every edit and every removal but `removed_by`'s
    removed_by: str | None = None  # the one act that may take it out of the tree
    edited: str = "ledger_file_edited"  # the code of an edit
    deleted: str = "ledger_file_deleted"  # the code of a removal no act made


_TASK_FILE = "never edited; leaves the tree only with its whole task folder, by an archive"
_HISTORY = ("ledger_file_edited", "ledger_file_deleted", "ledger_file_uncommitted", "file_invalid")

ENVELOPE = Kind(
    "envelope",
    "tasks/<id>/envelope.yaml",
    "its sender (`from`; the submitter when it names none), in the commit that adds its "
    "`submitted` status, signed there",
    _TASK_FILE,
    "the contract: what is asked, what the recipient owns, the check that decides it",
    "from",
    "through its `submitted` status (the envelope's sender signs that file)",
    (*_HISTORY, "chain_broken", "task_id_collision", "transition_unauthorized", "author_mismatch"),
    ("claim", "complete", "ownership", "lineage", "ready"),
    live="every transition of the task, and a successor's link, check it against the "
    "digest its `submitted` recorded (`ledger_file_edited`)",
    removed_by="archive",
)
STATUS = Kind(
    "status",
    "tasks/<id>/status/<seq>-<state>-<nonce>.yaml",
    "its `by`, when the lifecycle lets `by` make that transition then (a party; `claim` the "
    "`to`; `completed` the holder, on passing evidence), authored as `by`",
    _TASK_FILE,
    "a transition, and who made it",
    "by",
    "`sig`, Ed25519 under taskfs-transition-v1; or the signed message that made it",
    (
        *_HISTORY,
        "chain_broken",
        "transition_not_allowed",
        "transition_unauthorized",
        "author_mismatch",
        "reason_required",
        "dependencies_unresolved",
        "completion_requires_evidence",
        "work_uncommitted",
    ),
    ("claim", "move", "complete", "ready", "lineage", "archive", "ownership"),
    live="nothing is written unsigned in a keyed agent's name (`signature_required`); a "
    "dependency's completion counts (for a claim and for `ready` alike) only by its holder or "
    "sender, signed where it had a key when it was committed, on a passing run of the task's "
    "command, signed by a runner trusted now where one is required",
    removed_by="archive",
)
EVIDENCE = Kind(
    "evidence",
    "tasks/<id>/evidence/<stamp>-<nonce>.yaml",
    "whoever runs the task's check (`taskfs check`) or records a judgement; a run counts for "
    "a completion only signed by a trusted runner key, where one is required",
    _TASK_FILE,
    "that the acceptance command ran on a tree, with this verdict (a judgement never counts)",
    None,
    "`signature`, Ed25519 by a runner key",
    (*_HISTORY, "evidence_unsigned", "evidence_signature_invalid", "completion_requires_evidence"),
    ("complete",),
    live="`complete` takes only a valid passing run of the task's command, signed by a "
    "trusted runner key where one is required",
    removed_by="archive",
)
MESSAGE = Kind(
    "message",
    f"tasks/<id>/messages/<stamp>-<nonce>.yaml, {layout.CONVERSATIONS}/<stamp>-<nonce>.yaml",
    "its `from`, signed when `from` has a key",
    _TASK_FILE + " (a conversation never leaves)",
    "that `from` said it (signed: verified by the key that stood when it was committed)",
    "from",
    "`sig`, interlink's Ed25519 signature (interlink-v2)",
    (*_HISTORY, "signature_invalid", "message_unsigned", "message_replayed"),
    ("move", "complete", "intake"),
    live="acted on only when its signature holds (`signature_invalid`, `message_unsigned`)",
    removed_by="archive",
)
READ = Kind(
    "read",
    "tasks/<id>/reads/<stamp>-<nonce>.yaml",
    "its `by`, the addressee of every message it marks, authored as `by`",
    _TASK_FILE,
    "that `by` read those messages (a delivery state; no transition rests on it)",
    "by",
    "`sig`, Ed25519 under taskfs-read-v1",
    (*_HISTORY, "read_unauthorized", "author_mismatch"),
    ("inbox",),
    live="a mark counts only by the addressee, signed where it has a key",
    removed_by="archive",
)
INTAKE = Kind(
    "intake",
    "tasks/<id>/intake/<stamp>-<nonce>.yaml",
    "a request: its requester (the first request names it); a proposal: its recipient, or "
    "anyone but the requester when it has none; a cancellation: a party; authored as `by`",
    _TASK_FILE,
    "a request not yet a contract, a proposal for it, and the requester's acceptance of one",
    "by",
    "`sig`, Ed25519 under taskfs-intake-v1; or the signed message that carried it",
    (*_HISTORY, "intake_unauthorized", "author_mismatch"),
    ("intake accept", "new"),
    live="`intake accept` takes only the proposal it names, waiting now, written by the "
    "recipient, signed where it has a key",
    removed_by="archive",
)
AMENDMENT = Kind(
    "amendment",
    "tasks/<id>/amendments/<stamp>-<nonce>.yaml",
    "an amendment: the task's sender (the submitted envelope's `from`), before the task ends, "
    "keeping its `id`, `from`, `parent`, lineage links (and, once claimed, `to`); an "
    "acceptance: the holder, of an amendment of the sender, while it works on the task; "
    "authored as `by`",
    _TASK_FILE,
    "a new version of the contract (in force at once before a claim), and the holder's "
    "consent to one after it; the versions before stay as they were",
    "by",
    "`sig`, Ed25519 under taskfs-amendment-v1",
    (*_HISTORY, "amendment_unauthorized", "author_mismatch"),
    ("claim", "complete", "ownership", "ready", "show"),
    live="the contract in force counts only an amendment by the sender and an acceptance by "
    "the holder, each signed where its writer has a key; a claim names the version it took",
    removed_by="archive",
)
ARCHIVE = Kind(
    "archive",
    f"{layout.ARCHIVE_DIR}/<stamp>-<nonce>.yaml",
    "someone `archive.by` allowed in the commit before, authored as its `by`, in the commit that "
    "takes out exactly the folders it names, each row what that commit held",
    "never edited, never removed",
    "that terminal tasks left the tree; never their state, which the commit before it holds",
    "by",
    "`sig`, Ed25519 under taskfs-archive-v1",
    (
        "ledger_file_edited",
        "ledger_file_deleted",
        "ledger_file_uncommitted",
        "file_invalid",
        "archive_unauthorized",
        "archive_not_terminal",
        "archive_row_false",
    ),
    ("claim", "ready", "new", "show", "lineage"),
    live="an archived task is read from the commit the archive took it from, never from "
    "the row; an id once archived stays taken",
)
AGENT_KEY = Kind(
    "agent-key",
    f"{layout.AGENT_KEYS_DIR}/<name>.pub",
    "anyone, for a name that has no key standing (`keys new`, `keys import`, `keys add`)",
    "never edited; leaves the tree only by its revocation",
    "which key signs for the name from its commit on; a signature proves the private part was used",
    None,
    "none: it is the key",
    ("agent_key_changed",),
    ("every signed act", "message", "status", "revocation"),
    live="a signature is checked against the key that stood when its file was committed, by "
    "decisions and audit alike (a key made later voids no earlier act); one edited or removed "
    "by hand is named by audit, which replays history",
    removed_by="revocation",
    edited="agent_key_changed",
    deleted="agent_key_changed",
)
REVOCATION = Kind(
    "revocation",
    f"{layout.REVOKED_DIR}/<name>-<key id>.yaml",
    "the key's owner, signing with the key it revokes, or the operator (`operator`, signed when "
    "it has a key), in the commit that removes that key, authored as its `by`",
    "never edited, never removed",
    "that the key stopped standing then: what it signed before still verifies",
    "by",
    "`sig`, Ed25519 under taskfs-revocation-v1 (the owner: by the key revoked)",
    ("agent_key_changed",),
    ("every signed act",),
    live="one that does not hold leaves the key standing: nothing is written unsigned in "
    "its owner's name, and no other key is made for it",
    edited="agent_key_changed",
    deleted="agent_key_changed",
)
RUNNER_KEY = Kind(
    "runner-key",
    f"{layout.RUNNER_KEYS_DIR}/<name>.pub",
    "anyone; a key counts only where the operator's trust list holds it (or, without a list, "
    "the repository's keys, noted by audit)",
    "never edited, never removed",
    "which evidence a runner signed; nothing where no one trusts it",
    None,
    "none: it is the key",
    ("runner_key_changed", "runner_key_added"),
    ("complete",),
    live="evidence counts only under the operator's trust list (or, without one, the "
    "repository's keys)",
    edited="runner_key_changed",
    deleted="runner_key_changed",
)
CONFIG = Kind(
    "config",
    layout.CONFIG_PATH,
    "anyone who can commit: every clone reads the same settings; audit notes each change",
    "changes by any commit (noted); the archive's check reads the settings of the commit before",
    "nothing about who acted: the settings every rule reads (HEAD's)",
    None,
    "none",
    ("config_changed", "config_invalid"),
    ("archive", "every rule"),
    live="every rule reads HEAD's settings",
    immutable=False,
)
SCHEMA = Kind(
    "schema",
    f"{layout.SCHEMA_DIR}/*.json",
    "anyone (`taskfs init` writes it)",
    "changes freely: derived from taskfs's models",
    "nothing: an editor's help; no rule reads it",
    None,
    "none",
    (),
    (),
    live="none",
    ledger=False,
    immutable=False,
)
DROP = Kind(
    "drop",
    "tasks/<name>.yaml, tasks/<name>+refused.yaml, tasks/.gitkeep",
    "anyone: an envelope dropped for the watcher, its refusal report, the folder's marker",
    "changes freely; the watcher consumes drops and clears reports",
    "nothing until the watcher submits it (then its envelope and status are the ledger's)",
    None,
    "none",
    (),
    (),
    live="none, until the watcher submits it",
    ledger=False,
    immutable=False,
)
POLICY = Kind(
    "policy",
    "outside every repository: $TASKFS_POLICY, $TASKFS_LEDGER, $TASKFS_TRUSTED_RUNNERS, "
    "$TASKFS_A2A_TOKENS (default: in ~/.config/taskfs/)",
    "the operator, outside the repository; one inside the working tree is refused",
    "the operator's to change; never committed",
    "what the operator allows: checks the watcher runs, tools bound, runner keys trusted, "
    "callers let in",
    None,
    "none: where it lies is its authority",
    ("policy_unsafe", "ledger_unsafe", "trust_list_unsafe", "tokens_unsafe"),
    ("watch", "bind", "complete", "the HTTP doors"),
    live="one inside the working tree is refused",
    ledger=False,
    immutable=False,
)

KINDS: tuple[Kind, ...] = (
    ENVELOPE,
    STATUS,
    EVIDENCE,
    MESSAGE,
    READ,
    INTAKE,
    AMENDMENT,
    ARCHIVE,
    AGENT_KEY,
    REVOCATION,
    RUNNER_KEY,
    CONFIG,
    SCHEMA,
    DROP,
    POLICY,
)
BY_NAME = {kind.name: kind for kind in KINDS}

# The folders of a task, by the kind of file each holds.
_TASK_FOLDERS = {
    layout.STATUS: STATUS,
    layout.EVIDENCE: EVIDENCE,
    layout.MESSAGES: MESSAGE,
    layout.READS: READ,
    layout.INTAKE: INTAKE,
    layout.AMENDMENTS: AMENDMENT,
}
_STAMPED = layout.STAMPED_NAME_RE


def kind_of(rel: str, tasks_rel: str = layout.DEFAULT_TASKS_DIR) -> Kind | None:
    """The row of the file at repository-relative `rel`; None for a path in the ledger's
    folders (`.taskfs/`, the tasks folder) that is no kind of file taskfs keeps there, and
    for work outside them (`is_ledger_path` tells the two apart)."""
    if rel.startswith(tasks_rel + "/"):
        return _task_kind(rel[len(tasks_rel) + 1 :].split("/"))
    if not rel.startswith(layout.TASKFS_DIR + "/"):
        return None
    if rel == layout.CONFIG_PATH:
        return CONFIG
    folder, _slash, name = rel.rpartition("/")
    if folder == layout.SCHEMA_DIR and name.endswith(".json"):
        return SCHEMA
    if folder == layout.ARCHIVE_DIR and _STAMPED.fullmatch(name):
        return ARCHIVE
    if folder == layout.CONVERSATIONS and _STAMPED.fullmatch(name):
        return MESSAGE
    if folder == layout.AGENT_KEYS_DIR and _key_file(name):
        return AGENT_KEY
    if folder == layout.RUNNER_KEYS_DIR and _key_file(name):
        return RUNNER_KEY
    if folder == layout.REVOKED_DIR and name.endswith(layout.SUFFIX):
        return REVOCATION
    return None


def _key_file(name: str) -> bool:
    return name.endswith(".pub") and layout.is_agent_name(name.removesuffix(".pub"))


def _task_kind(parts: list[str]) -> Kind | None:
    if len(parts) == 1:
        name = parts[0]
        return (
            DROP if name == ".gitkeep" or layout.is_drop(parts) or layout.is_report(parts) else None
        )
    if not layout.is_task_id(parts[0]):
        return DROP if layout.is_report(parts) else None
    if len(parts) == 2:
        if parts[1] == layout.ENVELOPE:
            return ENVELOPE
        return DROP if layout.is_report(parts) else None
    if len(parts) == 3 and parts[2].endswith(layout.SUFFIX):
        return _TASK_FOLDERS.get(parts[1])
    return None


def is_ledger_path(rel: str, tasks_rel: str = layout.DEFAULT_TASKS_DIR) -> bool:
    """Whether `rel` lies in the ledger's folders, where every file must be of a kind."""
    return rel.startswith((tasks_rel + "/", layout.TASKFS_DIR + "/"))


def rule_of(rel: str, tasks_rel: str = layout.DEFAULT_TASKS_DIR) -> str | None:
    """The name of the rule a finding about `rel` cites; None for no file of the ledger."""
    kind = kind_of(rel, tasks_rel)
    if kind is None and rel.startswith(tasks_rel + "/") and rel.count("/") == 1:
        return ENVELOPE.name  # a task folder as a whole: its envelope stands for it
    return kind.name if kind is not None else None


# -- the act rules the live gate and audit share ------------------------------------------------


def may_revoke(name: str, by: str) -> str | None:
    """Why `by` may not revoke `name`'s key (None: it may): the owner revokes its own key (and,
    as every act of an agent with a key, signs the revocation with it: the key it revokes),
    the operator any."""
    if by in (name, OPERATOR):
        return None
    return f"only {name!r} itself (signing with the key) or the operator ({OPERATOR}) revokes it"


# -- the table as docs/trust.md shows it ------------------------------------------------------


def markdown_table() -> str:
    """The table, as docs/trust.md carries it between its markers."""
    head = (
        "| rule | where | who may add it | may it change | what it proves | signed | named by "
        "| decisions check |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n"
    )
    rows = []
    for kind in KINDS:
        codes = ", ".join(f"`{code}`" for code in kind.named_by) or "nothing: no rule reads it"
        cells = [_text(c) for c in (kind.where, kind.adds, kind.changes, kind.proves, kind.signed)]
        rows.append("| " + " | ".join((f"`{kind.name}`", *cells, codes, _text(kind.live))) + " |")
    return head + "\n".join(rows) + "\n"


def _text(cell: str) -> str:
    """A cell as markdown shows it: a path's `<id>` kept, a `|` not read as a column."""
    return cell.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
