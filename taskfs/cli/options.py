"""The options of the commands the fast path reads (`taskfs.cli.fast`), in one table that the
click commands are built from too (`clicked`), so that a command line means the same whichever
of the two reads it: an option added to a command is added to both (issue 31).

Imports nothing: the fast path reads it before anything else. The lists of allowed values are
named here and looked up where they are checked (`allowed`), since the lifecycle's module costs
the hottest commands more than their whole answer.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Option:
    """One option: its name on the command line, the parameter it fills, and how it reads."""

    __slots__ = (
        "choices",
        "default",
        "dest",
        "envvar",
        "help",
        "metavar",
        "multiple",
        "name",
        "negative",
        "value",
    )

    def __init__(
        self,
        name: str,
        dest: str,
        help: str,
        *,
        value: bool = True,
        multiple: bool = False,
        envvar: str | None = None,
        choices: str | None = None,
        metavar: str | None = None,
        default: str | None = None,
        negative: str | None = None,
    ) -> None:
        self.name = name
        self.dest = dest
        self.help = help
        self.value = value  # False: a flag
        self.multiple = multiple  # may be given more than once; its values are collected
        self.envvar = envvar  # read when the option is not given (an empty value is none)
        self.choices = choices  # the name of its allowed values (`allowed`)
        self.metavar = metavar
        self.default = default  # the value when neither the option nor its envvar is given
        self.negative = negative  # a flag's other name, which sets it False (`--no-network`)


class Command:
    """A command's plain arguments (name and how many: -1 for one or more) and options."""

    __slots__ = ("arguments", "negatives", "options")

    def __init__(self, arguments: tuple[tuple[str, int], ...], *options: Option) -> None:
        self.arguments = arguments
        self.options = {option.name: option for option in options}
        self.negatives = {o.negative: o for o in options if o.negative is not None}

    def count(self) -> int:
        """How many plain arguments: -1 for one or more (only the last can take many)."""
        return -1 if any(n == -1 for _name, n in self.arguments) else len(self.arguments)


JSON = Option("--json", "as_json", "Print one JSON document.", value=False)
AGENT = Option(
    "--agent", "agent", "The acting agent (default: $TASKFS_AGENT).", envvar="TASKFS_AGENT"
)
REASON_MOVE = Option("--reason", "reason", "Why (required for failed and rejected).")
LABEL = Option(
    "--label",
    "labels",
    "Only tasks carrying this label (repeated: every one of them).",
    multiple=True,
    metavar="LABEL",
)

COMMANDS: dict[str, Command] = {
    "ls": Command(
        (),
        Option("--state", "state", "Only tasks in this state.", choices="listed_states"),
        Option("--to", "to", "Only tasks addressed to this agent."),
        Option("--context", "context", "Only tasks of this contextID."),
        Option(
            "--archived",
            "archived",
            "The archived tasks instead (taskfs archive took them out of the working tree).",
            value=False,
        ),
        LABEL,
        Option(
            "--grep",
            "grep",
            "Only tasks whose objective, request's words or messages hold TEXT (any case).",
            metavar="TEXT",
        ),
        JSON,
    ),
    "ready": Command((), AGENT, LABEL, JSON),
    "claim": Command(
        (("task_id", 1),),
        AGENT,
        Option("--sync", "push", "Push the claim; refused if one came first.", value=False),
        JSON,
    ),
    "show": Command(
        (("task_id", 1),),
        Option(
            "--format",
            "fmt",
            "markdown: contract, state, history, evidence and artifacts for a pull request.",
            choices="formats",
            default="text",
        ),
        JSON,
    ),
    "move": Command((("task_id", 1), ("state", 1)), AGENT, REASON_MOVE, JSON),
    "refuse": Command(
        (("task_id", 1),), AGENT, Option("--reason", "reason", "Why the task is refused."), JSON
    ),
    "complete": Command(
        (("task_id", 1),),
        AGENT,
        Option(
            "--artifact",
            "artifacts",
            "A result, by reference (a path, a URL, a commit); may be repeated.",
            multiple=True,
            metavar="NAME=LOCATION",
        ),
        JSON,
    ),
    "new": Command((("files", -1),), AGENT, JSON),
    "check": Command(
        (("task_id", 1),),
        Option(
            "--timeout",
            "timeout",
            "Time limit in seconds, more than 0 and at most 86400 (default: the envelope's, "
            "else the repository's).",
        ),
        Option(
            "--fresh", "fresh", "Run in a fresh checkout of HEAD (a second opinion).", value=False
        ),
        Option(
            "--request",
            "request",
            "Do not run it here: ask for it with a result message (a watcher answers).",
            value=False,
        ),
        Option("--text", "text", "With --request: what to say about the result.", default=""),
        Option(
            "--sandbox",
            "sandbox",
            "Run the command in a bubblewrap sandbox: auto (when the host has one), on (refuse "
            "without), off (default: $TASKFS_SANDBOX, else check.sandbox in .taskfs/config.yaml, "
            "else auto).",
            choices="sandbox_modes",
        ),
        Option(
            "--network",
            "network",
            "Let the sandboxed command reach the network (default: $TASKFS_CHECK_NETWORK, else "
            "no).",
            value=False,
            negative="--no-network",
        ),
        AGENT,
        JSON,
    ),
    "send": Command(
        (("task_id", 1), ("text", 1)),
        AGENT,
        Option(
            "--status",
            "status",
            "needs_input, result, failed and canceled drive the lifecycle; none: conversation.",
            choices="send_statuses",
        ),
        Option("--in-reply-to", "in_reply_to", "The message answered.", metavar="MSG_ID"),
        Option("--to", "to", "The recipient (default: the other party).", metavar="PEER"),
        Option("--session", "session", "Unsigned routing hint: one session of the recipient."),
        JSON,
    ),
}


def allowed(choices: str) -> tuple[str, ...]:
    """The values an option's `choices` name allows."""
    if choices == "formats":
        return ("text", "markdown")
    if choices == "sandbox_modes":
        return ("auto", "on", "off")
    from taskfs.core import lifecycle

    named = {"listed_states": lifecycle.LISTED_STATES, "send_statuses": lifecycle.SEND_STATUSES}
    return tuple(named[choices])


def parse(command: Command, args: list[str]) -> tuple[dict[str, Any], list[str]] | None:
    """The options' values (a list for a repeated one, True for a flag given) and the plain
    arguments, read as click reads them; None for anything click should read itself (an
    unknown option, a value that looks like an option, `--`, `--help`, `-` for stdin, too few
    or too many arguments): it says what is wrong in its own words."""
    values: dict[str, Any] = {}
    plain: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-"):
            plain.append(arg)
            continue
        name, eq, given = arg.partition("=")
        option = command.options.get(name) or command.negatives.get(name)
        if option is None or (option.dest in values and not option.multiple):
            return None
        if not option.value:
            if eq:
                return None  # `--json=...`: click's to refuse
            values[option.dest] = name != option.negative
            continue
        if not eq:
            if not rest or rest[0].startswith("-"):
                return None  # `--reason --json`: for click to read
            given = rest.pop(0)
        if option.multiple:
            values.setdefault(option.dest, []).append(given)
        else:
            values[option.dest] = given
    wanted = command.count()
    if len(plain) != wanted and not (wanted == -1 and plain):
        return None
    return values, plain


def clicked(name: str, **extra: dict[str, Any]) -> Callable[[Any], Any]:
    """The click decorators of command `name`'s plain arguments and options, in the table's
    order; `extra` adds click's own settings by parameter name (a type, a callback)."""
    import click

    command = COMMANDS[name]

    def apply(function: Any) -> Any:
        for option in reversed(command.options.values()):
            settings: dict[str, Any] = {"help": option.help}
            if not option.value:
                settings["is_flag"] = True
            if option.multiple:
                settings["multiple"] = True
            if option.envvar:
                settings["envvar"] = option.envvar
            if option.choices:
                settings["type"] = click.Choice(allowed(option.choices))
            if option.metavar:
                settings["metavar"] = option.metavar
            if option.default is not None:
                settings["default"] = option.default
            name = option.name
            if option.negative is not None:  # a pair of flags, unset (None) when neither given
                name, settings["default"] = f"{name}/{option.negative}", None
            settings.update(extra.get(option.dest, {}))
            function = click.option(name, option.dest, **settings)(function)
        for argument, count in reversed(command.arguments):
            settings = {"nargs": count} if count != 1 else {}
            if argument == "task_id":
                from taskfs.cli.ids import TASK_ID

                settings["type"] = TASK_ID
            if count == -1:
                settings["required"] = True
            settings.update(extra.get(argument, {}))
            function = click.argument(argument, **settings)(function)
        return function

    return apply
