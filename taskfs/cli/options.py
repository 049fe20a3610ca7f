"""The options of the commands the fast path reads (`taskfs.cli.fast`), in one table that the
click commands are built from too (`clicked`), so that a command line means the same whichever
of the two reads it (issues 31 and 36).

The table carries meaning, not only parsing. Each option either filters a listing (`field`: the
task row's field, contract section 4, that it must hold, as `taskfs.readmodel.filters` says: equal
it, be one of its list, or be found in what `ls --grep` searches) or is one the command's body
reads (the command's `reads`); an option that is neither is refused here, when the table is built.
Both paths read a command line into one value, `Given` (every option's value as click gives it: the
one on the command line, else its environment variable's, else its default), and hand it to the
same body (`taskfs.cli.bodies.answer`); a listing's filters travel in it (`Given.filters`) to the
one function that applies them (`taskfs.readmodel.filters`), on the store and off it. So a filter
added to the table alone is honoured by both paths, and an option the table gives no meaning is
refused by both.

Imports nothing: the fast path reads it before anything else. The lists of allowed values are
named here and looked up where they are checked (`allowed`), since the lifecycle's module costs
the hottest commands more than their whole answer.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from taskfs.readmodel.filters import Filters  # (field of a task's row, value), in order


class Option:
    """One option: its name on the command line, the parameter it fills, and how it reads."""

    __slots__ = (
        "choices",
        "default",
        "dest",
        "envvar",
        "field",
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
        field: str | None = None,
    ) -> None:
        if field is not None and not field.replace("_", "").isalnum():
            raise ValueError(f"{name}: {field!r} is not a field of a task's row")
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
        # A listing filter: the field of a task's row (contract section 4) the option's value
        # must hold (`taskfs.readmodel.filters`); a filter flag given asks for True, not given
        # for False (or absent); an option given more than once asks for every value.
        self.field = field

    def unset(self) -> Any:
        """The value when the command line does not give the option, as click gives it."""
        if self.envvar:
            import os

            found = os.environ.get(self.envvar)
            if found:  # click reads an empty variable as none
                return found
        if self.default is not None:
            return self.default
        if not self.value:
            return None if self.negative is not None else False
        return () if self.multiple else None


class Command:
    """A command's plain arguments (name and how many: -1 for one or more) and options, and
    the options its body reads (`reads`, by `dest`); every other option must be a filter."""

    __slots__ = ("arguments", "negatives", "options", "reads")

    def __init__(
        self,
        arguments: tuple[tuple[str, int], ...],
        *options: Option,
        reads: tuple[str, ...] = ("as_json",),
    ) -> None:
        for option in options:
            if option.field is None and option.dest not in reads:
                raise ValueError(
                    f"{option.name}: the table gives it no meaning (it is no filter, and the "
                    f"command's body does not read {option.dest!r})"
                )
        self.arguments = arguments
        self.options = {option.name: option for option in options}
        self.negatives = {o.negative: o for o in options if o.negative is not None}
        self.reads = reads

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
    field="labels",
)

COMMANDS: dict[str, Command] = {
    "ls": Command(
        (),
        Option(
            "--state", "state", "Only tasks in this state.", choices="listed_states", field="state"
        ),
        Option("--to", "to", "Only tasks addressed to this agent.", field="to"),
        Option("--context", "context", "Only tasks of this contextID.", field="contextID"),
        Option(
            "--archived",
            "archived",
            "The archived tasks instead (taskfs archive took them out of the working tree).",
            value=False,
            field="archived",
        ),
        LABEL,
        Option(
            "--grep",
            "grep",
            "Only tasks whose objective, request's words or messages hold TEXT (any case).",
            metavar="TEXT",
            field="text",
        ),
        JSON,
    ),
    "ready": Command((), AGENT, LABEL, JSON, reads=("agent", "as_json")),
    "claim": Command(
        (("task_id", 1),),
        AGENT,
        Option("--sync", "push", "Push the claim; refused if one came first.", value=False),
        JSON,
        reads=("agent", "push", "as_json"),
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
        reads=("fmt", "as_json"),
    ),
    "move": Command(
        (("task_id", 1), ("state", 1)),
        AGENT,
        REASON_MOVE,
        JSON,
        reads=("agent", "reason", "as_json"),
    ),
    "refuse": Command(
        (("task_id", 1),),
        AGENT,
        Option("--reason", "reason", "Why the task is refused."),
        JSON,
        reads=("agent", "reason", "as_json"),
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
        reads=("agent", "artifacts", "as_json"),
    ),
    "new": Command((("files", -1),), AGENT, JSON, reads=("agent", "as_json")),
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
        reads=("timeout", "fresh", "request", "text", "sandbox", "network", "agent", "as_json"),
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
        reads=("agent", "status", "in_reply_to", "to", "session", "as_json"),
    ),
}


class Given:
    """A command line read through the table: the one value both paths hand the command's
    body. `values` holds every option's value by `dest` as click gives it (given, else its
    environment variable's, else its default) and every plain argument by name."""

    __slots__ = ("name", "values")

    def __init__(self, name: str, values: dict[str, Any]) -> None:
        self.name = name
        self.values = values

    def __getitem__(self, dest: str) -> Any:
        return self.values[dest]

    def get(self, dest: str, default: Any = None) -> Any:
        return self.values.get(dest, default)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Given) and (self.name, self.values) == (other.name, other.values)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Given({self.name!r}, {self.values!r})"

    def filters(self) -> Filters:
        """The listing filters this command line asks for (`Option.field`): one for each value
        of an option given more than once (every one must hold)."""
        out: list[tuple[str, Any]] = []
        for option in COMMANDS[self.name].options.values():
            value = self.values.get(option.dest)
            if option.field is None or value is None:
                continue
            for one in value if option.multiple else (value,):
                out.append((option.field, one))
        return tuple(out)


def allowed(choices: str) -> tuple[str, ...]:
    """The values an option's `choices` name allows."""
    if choices == "formats":
        return ("text", "markdown")
    if choices == "sandbox_modes":
        return ("auto", "on", "off")
    from taskfs.core import lifecycle

    named = {"listed_states": lifecycle.LISTED_STATES, "send_statuses": lifecycle.SEND_STATUSES}
    return tuple(named[choices])


def parse(name: str, args: list[str]) -> Given | None:
    """The command line `args` of command `name` read as click reads it (see `Given`); None for
    anything click should read itself (an unknown option, a value that looks like an option,
    `--`, `--help`, `-` for stdin, too few or too many arguments): it says what is wrong in its
    own words."""
    command = COMMANDS[name]
    values: dict[str, Any] = {}
    plain: list[str] = []
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-"):
            plain.append(arg)
            continue
        option_name, eq, given = arg.partition("=")
        option = command.options.get(option_name) or command.negatives.get(option_name)
        if option is None or (option.dest in values and not option.multiple):
            return None
        if not option.value:
            if eq:
                return None  # `--json=...`: click's to refuse
            values[option.dest] = option_name != option.negative
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
    return _completed(name, values, plain)


def _completed(name: str, values: dict[str, Any], plain: list[str]) -> Given:
    """What the command line gave, with what it did not give as click fills it in."""
    command = COMMANDS[name]
    for option in command.options.values():
        if option.dest not in values:
            values[option.dest] = option.unset()
        elif option.multiple:
            values[option.dest] = tuple(values[option.dest])
    for argument, count in command.arguments:
        values[argument] = tuple(plain) if count == -1 else plain.pop(0)
    return Given(name, values)


def clicked(name: str, **extra: dict[str, Any]) -> Callable[[Any], Any]:
    """The click decorators of command `name`'s plain arguments and options, in the table's
    order, around a function of one `Given` (what click read, by `dest`); `extra` adds click's
    own settings by parameter name (a type, a callback)."""
    import functools

    import click

    command = COMMANDS[name]

    def apply(body: Callable[[Given], int]) -> Any:
        @functools.wraps(body)
        def function(**values: Any) -> int:
            for option in command.options.values():
                if option.multiple:
                    values[option.dest] = tuple(values[option.dest])
            return body(Given(name, values))

        for option in reversed(command.options.values()):
            settings: dict[str, Any] = {"help": option.help}
            if not option.value:
                settings["is_flag"] = True
            if option.multiple:
                settings["multiple"] = True
            if option.envvar:
                settings["envvar"] = option.envvar
            if option.choices == "listed_states":  # a near miss names the state meant
                from taskfs.cli.states import StateChoice

                settings["type"] = StateChoice(allowed(option.choices))
            elif option.choices:
                settings["type"] = click.Choice(allowed(option.choices))
            if option.metavar:
                settings["metavar"] = option.metavar
            if option.default is not None:
                settings["default"] = option.default
            spelled = option.name
            if option.negative is not None:  # a pair of flags, unset (None) when neither given
                spelled, settings["default"] = f"{spelled}/{option.negative}", None
            settings.update(extra.get(option.dest, {}))
            function = click.option(spelled, option.dest, **settings)(function)
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
