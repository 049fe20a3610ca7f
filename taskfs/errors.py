"""The contract's named errors: one table, one value type, one exception.

Every refusal taskfs makes is a `Problem` carrying a code from `MESSAGES`. Code paths return
problems or raise `TaskfsError` with all of them at once; only the adapters turn them into exit
statuses and output. A code is never renamed: users' scripts match on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any

from taskfs import i18n

# code -> message template. Templates name their parameters; `problem()` fills them from the
# keyword arguments, which also travel in the JSON form so that machines need not parse text.
MESSAGES: dict[str, str] = {
    # envelope (contract section 2)
    "objective_required": "objective is missing or empty: say what is being asked for",
    "output_format_required": "outputFormat is missing or empty: say the shape the result must "
    "arrive in",
    "tool_and_source_guidance_required": "toolAndSourceGuidance is missing or empty: say which "
    "tools and sources the work should draw on",
    "boundaries_required": "boundaries is missing or empty: say what the recipient must not do",
    "files_and_interfaces_required": "filesAndInterfaces is missing or empty: list the files "
    "(globs) or interface:<name> entries the recipient owns",
    "acceptance_check_command_required": "acceptanceCheck.passFailCommand is missing or empty: "
    "give a shell command whose exit status decides pass or fail",
    "acceptance_check_verification_required": "acceptanceCheck.endToEndVerification is missing "
    "or empty: give the step that proves the result works in context",
    "context_id_required": "contextID is missing or empty: name the context the task belongs to",
    "depends_on_self": "dependsOn names the task itself ({id})",
    "depends_on_duplicate": "dependsOn names {id} more than once",
    "dependency_cycle": "this task would close a dependency cycle: {cycle_text}",
    "invalid_task_id": "{value!r} is not a task id{near_text}: use 1-64 characters of a-z 0-9 "
    ". _ -, starting with a letter or digit",
    "files_and_interfaces_invalid": "filesAndInterfaces entry {value!r} is invalid: {reason}",
    "unknown_field": "unknown key {key!r}{hint_text}: only the contract's keys and x- prefixed "
    "keys are allowed",
    "invalid_value": "{field} has the wrong type or value: {reason}",
    "unknown_argument": "{tool} takes no argument {field!r}: it takes {known_text}",
    "yaml_invalid": "not a valid envelope file: {reason}",
    "task_exists": "a task with id {id!r} already exists{archived_text}",
    "ownership_conflict": "{entry!r} overlaps {other_entry!r} of open task {other!r} (both "
    "match {witness!r}); make one task depend on the other or narrow the entries",
    # lifecycle (contract section 3)
    "task_not_found": "no task {id!r}{near_text}; `taskfs ls` lists the tasks",
    "agent_not_allowed": "agent {agent!r} may not {action_text}: {reason}",
    "transition_not_allowed": "task {id!r} cannot go from {from_state} to {to_state}{why_text}; "
    "allowed from {from_state}: {next_states}",
    "reason_required": "moving task {id!r} to {to_state} needs a reason: {how}",
    "dependencies_unresolved": "task {id!r} depends on tasks that are not completed: "
    "{pending_text}",
    "completion_requires_evidence": "task {id!r} has no recorded passing acceptance "
    "check{why_text}",
    "evidence_stale": "the passing evidence of task {id!r} predates a change to the files it "
    "owns{why_text}",
    "owned_files_untouched": "no commit since {holder}'s claim of task {id!r} touched the files "
    "it owns ({owned_text}): it is completed all the same, on work committed before the claim or "
    "on none; if the work is elsewhere, tell its sender (`taskfs send {id}`)",
    # intake: requests not yet a contract (contract section 12)
    "intake_open": "{id!r} is a request from {requester!r}, not a task yet: it becomes one "
    "when {requester!r} sends the whole envelope on its id (`taskfs intake add {id}`; `taskfs "
    "show {id}` names what is missing); until then its recipient may propose an envelope "
    "(`taskfs intake propose`), and either may cancel it",
    "intake_closed": "intake {id!r} takes no more requests: {state_text}",
    "proposal_not_found": "intake {id!r} has no proposal waiting: the recipient proposes one "
    "with `taskfs intake propose {id} FILE`",
    # amendments: a contract's new versions (issue 38)
    "amendment_not_allowed": "task {id!r} cannot be amended so: {reason}; `taskfs show {id}` "
    "shows the contract in force",
    "amendment_not_found": "task {id!r} has no amendment {name!r} waiting for its holder: "
    "`taskfs show {id}` lists its amendments",
    "amendment_pending": "an amendment of task {id!r} waits for its holder {holder}'s answer "
    "({file}, by {by}, changing {keys_text}): accept it with `taskfs amend {id} --accept` and "
    "check again, or decline it by completing the task to the version {holder} claimed, which "
    "lets it lapse",
    "amendment_lapsed": "task {id!r} ended with an amendment its holder {holder} did not answer "
    "({file}, by {by}, changing {keys_text}): this completion declined it, and it can no longer "
    "be accepted; tell {by} (`taskfs send {id}`) if its change is still wanted",
    # ownership: owners, guard and the hook (contract sections 4, 5)
    "ownership_guard": "{path} is owned by open task {id!r} of {owner_text} (entry "
    "{entry!r}){more_text}; {agent_text} may not change it while that task is open"
    "{commit_text}",
    "path_outside_repository": "{path} is outside the repository {root}",
    "hook_exists": "{path} is a pre-commit hook taskfs did not write, and it cannot be kept "
    "to run first ({reason}); add `taskfs guard` to it yourself",
    # the ledger's integrity (audit, validate)
    "chain_broken": "task {id!r}: {path} breaks its status chain: {reason_text}",
    "file_invalid": "{path} is not a well-formed taskfs file: {reason}",
    "ledger_file_edited": "{path} was changed after it was committed in {commit}",
    "ledger_file_deleted": "{path} was deleted after it was committed in {commit}",
    "ledger_file_uncommitted": "{path} is a ledger file that no commit holds, and taskfs decides "
    "on committed files only: commit it with taskfs (`taskfs watch --once` takes in what was "
    "dropped) or remove it (`git checkout -- {path}` restores a committed file)",
    "task_id_collision": "task {id!r} holds two different envelopes: {reason}",
    "archive_not_terminal": "{commit} archived task {id!r}, which was {state} then, not in a "
    "terminal state: only finished tasks leave the working tree",
    "archive_unauthorized": "{path}: the archive in {commit} was made by {author!r}{why_text}; "
    "archive.by in .taskfs/config.yaml names who may archive",
    # evidence and runner keys (audit)
    "evidence_unsigned": "{path}: evidence is unsigned{why_text}",
    "evidence_signature_invalid": "{path}: its signature does not verify{why_text}",
    "runner_key_added": "runner key {name!r} ({path}) was added in {commit} by "
    "{author!r}{why_text}",
    "runner_key_changed": "runner key {path} was {change} after it was committed in {commit}",
    # sync: exchanging the ledger with a git remote (contract section 10)
    "sync_no_upstream": "branch {branch!r} has no remote to sync with{reason_text}: run `git "
    "branch --set-upstream-to=<remote>/<branch>` or `taskfs sync --remote <remote>`",
    "sync_detached_head": "HEAD is detached: switch to the branch to sync (`git switch "
    "<branch>`), then run taskfs sync again",
    "sync_in_progress": "{operation} is in progress in this checkout: finish or abort it, then "
    "run taskfs sync again",
    "sync_unrelated_histories": "{upstream} shares no history with HEAD: nothing was merged; "
    "merge them by hand (`git merge --allow-unrelated-histories {upstream}`) if they belong "
    "together",
    "sync_conflict": "merging {upstream} conflicts in {paths_text}: nothing was changed; merge "
    "by hand (`git merge {upstream}`, resolve, commit), then run taskfs sync again",
    "sync_local_changes": "merging {upstream} would overwrite uncommitted work in "
    "{paths_text}: nothing was changed; commit or stash it, then run taskfs sync again",
    "sync_push_rejected": "{remote} refused the push to {branch!r}: {reason}",
    "history_rewritten": "{remote}/{branch} no longer holds {dropped} ledger commits this clone "
    "has and it once held ({first}{more_text}): its history was rewritten (a forced push), and "
    "a transition published before cannot be overturned that way{then_text}; find out who "
    "rewrote it, and push the history back (`git push --force-with-lease={branch}:{tip} "
    "{remote} HEAD:{branch}` restores this clone's)",
    # delegation (contract section 8)
    "delegation_sender_mismatch": "task {id!r} is delegated from {parent!r}, so its from must be "
    "{expected!r} (the parent's recipient), not {actual!r}",
    "ownership_not_held": "entry {entry!r} is not covered by any entry of the parent task "
    "{parent!r}",
    "tool_not_held": "tool {tool!r} was not granted to the parent task {parent!r}",
    "delegation_too_deep": "task {id!r} would be {depth} delegation hops below its root task; "
    "the limit is {limit} (delegationMaxDepth)",
    "delegation_loop": "the parent chain returns to {id!r}: {chain_text}",
    "parent_not_found": "task {id!r} names parent {parent!r}, which does not exist: a child can "
    "only be checked against a parent that is in the ledger (or in the same submission)",
    # capabilities (contract section 7)
    "ledger_unsafe": "the capability ledger {path} is inside the repository's working tree, "
    "where any sender can write; keep it outside (default ~/.config/taskfs/ledger.yaml)",
    # the runner policy: which acceptance commands the watcher may run (README, "The watcher")
    "policy_unsafe": "the runner policy {path} is inside the repository's working tree, where "
    "any sender can write; keep it outside (default ~/.config/taskfs/policy.yaml, or set "
    "TASKFS_POLICY)",
    "policy_invalid": "{path} is not a valid runner policy: {reason}",
    "check_not_allowed": "the watcher did not run the acceptance check of task {id!r}: "
    "{reason}; a person can run it with `taskfs check {id}`",
    "check_stopped": "the acceptance check {command!r} was stopped before it ended ({reason}): "
    "its processes were killed and no evidence was recorded; run the check again",
    # keys
    "key_exists": "a {kind} key for {name!r} already exists at {path}",
    "key_invalid": "{path} is not a usable key: {reason}",
    "key_unsafe": "{path} is inside the repository's working tree; private keys must live "
    "outside it (set TASKFS_KEY_DIR)",
    "key_not_found": "no committed {kind} key {name!r} ({path}); `taskfs keys ls` lists them",
    "trust_list_unsafe": "the runner trust list {path} cannot be relied on: {reason}; keep a "
    "readable one outside the working tree (default ~/.config/taskfs/trusted-runners.yaml), or "
    "unset TASKFS_TRUSTED_RUNNERS",
    # messages (contract section 6)
    "signature_invalid": "message {msg_id!r}: its signature does not verify ({reason})",
    "message_misaddressed": "message{msg_text} is addressed to {to!r}, not {agent!r}",
    "message_expired": "message {msg_id!r} was written at {at}, outside the accepted window "
    "(24 hours back, 60 seconds ahead of {now})",
    "message_replayed": "message {msg_id!r} (found as {file_id!r}) is a copy: its id is already "
    "seen in the task or names another file",
    "message_unsigned": "message {msg_id!r} is unsigned: {reason}",
    "message_not_found": "no message {msg_id!r}{why_text}; `taskfs messages TASK` lists a task's "
    "messages",
    "no_conversation": "no task_id, and no earlier message between {agent!r} and {peer!r} to "
    "continue: name the task, or send an envelope to open one",
    "sender_unknown": "message {msg_id!r} comes from key {key!r}, which no committed key "
    "admits: admit it with `taskfs keys add --agent NAME --public {key}`",
    "message_invalid": "{where}: not a well-formed interlink message ({reason})",
    "recipient_unknown": "{agent!r} has no committed key, and a signed message is addressed to "
    "its recipient's key: admit it with `taskfs keys add --agent {agent} --public ID` (or make "
    "one with `taskfs keys new --agent {agent}`)",
    "bus_unreachable": "the interlink bus at {url} did not serve the bridge: {reason}; start "
    "interlink-bus there, or name another with --url or INTERLINK_URL",
    "session_unroutable": "{peer!r} has no session to send to: {reason}; pass session=<id> "
    "(from the bus roster), or wait until it is online{sessions_text}",
    "message_empty": "the message says nothing: write its words (a blank or empty text is "
    "not sent)",
    "message_ambiguous": "{msg_id!r} fits {count} messages ({matches_text}): give more of its "
    "id, or the whole id; `taskfs messages TASK` lists a task's messages",
    # host set-up: taskfs setup claude|codex (README: Where agents live)
    "host_config_invalid": "{path} is not valid {format}: {reason}; nothing was changed (fix or "
    "move it, then run taskfs setup again)",
    # lint warnings: valid but weak contracts (`taskfs lint`, `taskfs review`)
    "check_cannot_fail": "the acceptance command {command!r} cannot fail, so it proves nothing: "
    "make it run the tests of what the task changes",
    "check_ignores_owned_files": "the acceptance command {command!r} names none of the files the "
    "task owns ({owned_text}): a check that does not exercise them proves little",
    "owns_everything": "{entry!r} owns files across the whole repository: name the folders the "
    "task works in",
    "boundaries_vague": "the boundaries {boundaries!r} forbid nothing in particular: say what the "
    "recipient must not do",
    "objective_too_short": "the objective has {words} words, fewer than {minimum}: say in a "
    "sentence what is asked for",
    "dependency_other_context": "it depends on {dependency!r}, a task of context "
    "{other_context!r}, not {context!r}",
    "dependency_unknown": "it depends on {dependency!r}, which no task is yet: it cannot be "
    "claimed until that task exists and completes (is the id right?)",
    "dependency_final": "it depends on {dependency!r}, which is {state}{now_text}: it will never "
    "complete, so this task cannot be claimed until {standing!r} is retried (taskfs retry "
    "{standing})",
    # the watcher (contract section 9)
    "task_id_mismatch": "{path} sits in the folder of task {folder!r} but names the id {id!r}: "
    "the folder's name is the task's id, so remove the id or make the two agree",
    "watcher_running": "another taskfs watch is already watching this checkout ({owner})",
    # the tool itself
    "not_a_repository": "{path} is not inside a git repository (run `taskfs init`)",
    "file_unreadable": "cannot read {path}: {reason}",
    "file_unwritable": "cannot write {path}: {reason}",
    "input_too_large": "{path} is over the limit of {limit_text} taskfs reads there: give less "
    "(docs/errors.md lists the limits)",
    "invalid_agent": "{value!r} is not an agent name: use 1-64 characters of letters, digits, "
    ". _ @ -, starting with a letter or digit",
    "agent_required": "name the acting agent with --agent or TASKFS_AGENT",
    "config_invalid": "{path} is not a valid taskfs configuration: {reason}",
    "git_failed": "git {command} failed: {reason}",
    "git_dir_read_only": "{path} cannot be written ({reason}): every question is answered here, "
    "but a change needs a checkout whose git dir you may write",
    "range_invalid": "{range!r} is not a revision range of this repository: {reason}",
    "usage": "{reason}",
    "internal_error": "taskfs hit an unexpected error ({reason}); set TASKFS_DEBUG=1 to see the "
    "traceback and please report it",
    "sandbox_unavailable": "the check cannot run in a sandbox here: {reason}; install bubblewrap "
    "(Debian: apt-get install bubblewrap) or choose --sandbox auto or off",
    "git_settings_changed": "the check changed {path} ({change}), where git finds commands to run "
    "(hooks, core.fsmonitor, filters, aliases, includes): git would have run them later with "
    "your environment; taskfs put it back as it was. Run checks in the sandbox: install "
    "bubblewrap (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap; Arch: pacman -S bubblewrap)",
    # A2A: the repository as an A2A agent, and tasks delegated to one (taskfs a2a)
    "event_not_found": "task {id!r} has no ledger event {event!r}: resume from an event id its "
    "stream sent (or leave Last-Event-ID out to start from the beginning)",
    "token_invalid": "{reason}: send `Authorization: Bearer <token>` with a token the server's "
    "token file names",
    "tokens_unsafe": "the token file of the HTTP doors {path} is inside the repository's working "
    "tree, where any agent can write; keep it outside (default ~/.config/taskfs/a2a.yaml, or "
    "set TASKFS_A2A_TOKENS)",
    "bind_refused": "no tokens are configured ({path}), so this HTTP door listens on loopback "
    "only, not on {host}: configure tokens, or use --host 127.0.0.1",
    "origin_refused": "the request's {header} {value!r} is refused: {reason}; a client on this "
    "machine sends JSON to the loopback address the server printed, and an operator lets a "
    "remote one in with tokens, or by listing its origin or host name (origins:, hosts:) in "
    "the token file of the HTTP doors",
    "a2a_failed": "the A2A agent at {url} did not answer as A2A: {reason}",
    "a2a_refused": "the A2A agent at {url} refused: {reason}",
    "a2a_version_unsupported": "A2A-Version {version!r} is not spoken here: send the header "
    "`A2A-Version: 1.0` with the A2A 1.0 methods ({method} is one); no header means 0.3, whose "
    "method names (message/send, tasks/get, ...) are answered too",
    "a2a_method_not_found": "{method!r} is not a method of A2A {version}: its name there is "
    "{named}; without the A2A-Version header the 0.3 names are answered, as 0.3",
    "media_type_unsupported": "a message part of type {media_type!r} cannot be read here: send "
    "the envelope as a data part, or YAML or prose as a text part ({accepted})",
    "task_finished": "task {id!r} is {state}: over A2A a finished task takes no more messages "
    "and no new subscription; read it with GetTask (a stream that was cut resumes with its "
    "Last-Event-ID)",
    "page_read_only": "the board's page is read-only: {method} is not answered here; every act "
    "goes through an agent's command or MCP tool (taskfs claim, agent_claim, ...)",
    "page_not_found": "the board serves no page at {path!r}: open / (the board) or /events (its "
    "stream of changes)",
    "work_uncommitted": "the passing evidence of task {id!r} was recorded while files it owns "
    "were not committed{why_text}",
    # audit: authority, authorship and agent keys (contract section 11)
    "transition_unauthorized": "{path}: {by!r} could not move task {id!r} from {from_state} to "
    "{to_state}: {reason}; find out who wrote it (git log -- {path})",
    "author_mismatch": "{path} says it is by {by!r}, but {commit} that added it was authored by "
    "{author}; taskfs commits each transition as its agent ({expected}), so someone else wrote "
    "it: find out who",
    "intake_unauthorized": "{path}: {by!r} could not write this {kind} of intake {id!r}: "
    "{reason}; find out who wrote it (git log -- {path})",
    "amendment_unauthorized": "{path}: {by!r} could not write this {kind} of task {id!r}: "
    "{reason}; it counts for nothing (find out who wrote it: git log -- {path})",
    "agent_key_changed": "agent key {path} was {change} in {commit} after it was first committed; "
    "signatures are checked against the key that stood when each file was committed: find out "
    "who changed it",
    "agent_key_revoked": "agent key {name!r} ({key_id}) was revoked in {commit} by {by}{why_text}: "
    "what it signed before then still verifies, nothing it signs after is taken",
    # the authority table (docs/trust.md; taskfs.core.ledger_kinds, issue 35)
    "signature_required": "{agent!r} has a key ({path}) whose private part is not on this "
    "machine, and taskfs writes nothing unsigned in its name (rule {rule}: {action_text}); act "
    "where its key is, or put its key in this machine's key folder (TASKFS_KEY_DIR)",
    "archive_row_false": "{path}: its row of {id!r} says {field} {said!r}, but {commit}, the "
    "commit it archived the task from, held {held!r}; the rules read the task from that commit, "
    "never from the row: find out who wrote it (git log -- {path})",
    "read_unauthorized": "{path}: {by!r} could not mark {msg_id!r} read: {reason}; find out who "
    "wrote it (git log -- {path})",
    "config_changed": "{path} was changed in {commit} by {author}{keys_text}: every rule reads the "
    "settings HEAD holds",
    "proposal_superseded": "intake {id!r}: {proposal} is the proposal waiting now{why_text}; read "
    "it (`taskfs show {id}`) and accept it by name (`taskfs intake accept {id} --proposal "
    "{proposal}`)",
    "request_empty": "the request says nothing: give the words of what is asked, or the "
    "envelope's fields",
}


@dataclass(frozen=True)
class Problem:
    """One named error: a contract code, a message for people, and data for machines.

    `message` is in the user's language; `english` is the same message in English, for the
    places that pass a message on as data (a `reason`), since data never changes with the
    language.
    """

    code: str
    message: str
    field: str | None = None
    data: Mapping[str, Any] = dc_field(default_factory=dict)
    english: str = dc_field(default="", compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.english:
            object.__setattr__(self, "english", self.message)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            out["field"] = self.field
        for key, value in self.data.items():
            out.setdefault(key, value)
        return out


def problem(code: str, *, field: str | None = None, **data: Any) -> Problem:
    """Build the `Problem` for `code`, its message filled from `data`.

    Parameters the template names but `data` lacks render as empty, so a caller can never turn
    a refusal into a crash by forgetting one. Parameters whose name ends in `_text` only feed
    the message and are left out of the machine-readable data. The message is in the user's
    language (`taskfs.i18n`); a translation that cannot be filled gives way to the English.
    """
    template = MESSAGES[code]
    values = _Defaulting({"field": field or "", **data})
    english = template.format_map(values)
    # A value said through `i18n.said` reads in the user's language in the message; the data
    # keeps its English.
    local = _Defaulting({k: getattr(v, "local", v) for k, v in values.items()})
    try:
        message = i18n.translate(code, template).format_map(local)
    except (ValueError, IndexError, AttributeError, TypeError):
        message = english
    public = {k: v for k, v in data.items() if not k.endswith("_text")}
    return Problem(code=code, message=message, field=field, data=public, english=english)


class _Defaulting(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return ""


class TaskfsError(Exception):
    """A refusal: one or more named problems. Exit status 1 at the command line."""

    def __init__(self, problems: Problem | Iterable[Problem]) -> None:
        self.problems: tuple[Problem, ...] = (
            (problems,) if isinstance(problems, Problem) else tuple(problems)
        )
        if not self.problems:
            raise ValueError("TaskfsError needs at least one problem")
        super().__init__("; ".join(f"{p.code}: {p.message}" for p in self.problems))

    @property
    def codes(self) -> list[str]:
        return [p.code for p in self.problems]


def fail(code: str, *, field: str | None = None, **data: Any) -> TaskfsError:
    """The exception for a single problem: `raise fail("task_not_found", id=...)`."""
    return TaskfsError(problem(code, field=field, **data))
