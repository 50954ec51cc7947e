"""`/name args` as the turn it becomes: the expanded text, the files it attaches, and what its turn may do.

The body is read, its arguments substituted, each `` !`command` `` run by the session's Bash tool and each
`@path` read by its Read tool — both asked of the permission policy first, exactly as a model's call would be, with
the command's `allowed-tools` already allowed. A refused command or file stops the command: nothing is sent, and
the user reads why. The turn then runs with the same `allowed-tools` (for that turn only) and the command's
`model`. A project command's `allowed-tools` widen what runs unasked, so they apply only where the folder's trust
permits them (`trust.gate`); otherwise the command runs without them and one line says so. A command never takes
the name of a built-in command (`/init`, `/compact`, …): the built-in wins in every front end.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..messages import ContentBlock, Message, TextBlock
from ..permissions.policy import Allow, ToolCallInfo
from ..tools.base import Tool
from ..tools.paths import display
from .catalog import CustomCommand, read_body
from .expand import bang_commands, mentions, replace_bangs, substitute
from .scope import TurnScope, allowing

if TYPE_CHECKING:
    from ..app import Assembled
    from ..trust.items import TrustItem

BUILTIN_COMMANDS = frozenset(
    [
        "help",
        "clear",
        "compact",
        "status",
        "permissions",
        "memory",
        "init",
        "resume",
        "output",
        "rewind",
        "hooks",
        "agents",
        "exit",
        "quit",
    ]
)
"""The names of the built-in slash commands (the REPL's; `/compact` and `/init` work headless and over the SDK
too): a custom command of one of these names is never run in their place."""


class Invocation(msgspec.Struct, frozen=True):
    """A command ready to send."""

    command: CustomCommand
    text: str
    """The expanded body: the user message of the turn."""
    attached: tuple[Message, ...]
    """The `@path` files, as a message before it (empty when there are none)."""
    scope: TurnScope


class Failed(msgspec.Struct, frozen=True):
    """The command cannot run; `message` says why (one line for the user)."""

    message: str


def lookup(built: Assembled, line: str) -> tuple[CustomCommand, str] | None:
    """The custom command `line` (`/name args`) names, and its arguments; None when it names none."""
    if not line.startswith("/"):
        return None
    name, _, args = line[1:].partition(" ")
    name = name.strip()
    if name in BUILTIN_COMMANDS:
        return None
    found = built.commands.find(name) if name else None
    if found is not None and found.name != name and any(skill.id == name for skill in built.knowledge.skills):
        return None  # a short name (`/commit` for `/git:commit`) never hides a skill of that name
    return (found, args.strip()) if found is not None else None


async def invoke(built: Assembled, command: CustomCommand, args: str) -> Invocation | Failed:
    """Expand `command` with `args` (running its `!` commands and reading its `@` files)."""
    from ..model_choice import chosen_model

    try:
        body = read_body(command)
    except OSError as exc:
        return Failed(f"/{command.name}: cannot read {command.path}: {exc.strerror or exc}")
    text = substitute(body, args)
    source = f"/{command.name}"
    allowed = command.allowed_tools
    notes: tuple[str, ...] = ()
    trust = built.trust
    if allowed and command.scope == "project" and trust is not None and not trust.permits(trust_item(command, built)):
        notes = (
            f"{source}: its allowed-tools ({', '.join(allowed)}) were left out: this folder's configuration is not "
            "trusted (`ram trust` shows it and trusts this folder)",
        )
        allowed = ()
    with allowing(built.policy, allowed, source):
        outputs: list[str] = []
        for line in bang_commands(text):
            ran = await _run(built, line, source)
            if isinstance(ran, Failed):
                return ran
            outputs.append(ran)
        text = replace_bangs(text, outputs)
        blocks: list[ContentBlock] = []
        for mention in mentions(text):
            read = await _attach(built, mention, source)
            if isinstance(read, Failed):
                return read
            if read is not None:
                blocks.append(read)
    if not text.strip():
        return Failed(f"/{command.name}: the command's file has no text to send")
    model = chosen_model(built.provider.name, built.provider.model, command.model) if command.model else ""
    attached = (Message("user", tuple(blocks), meta=True),) if blocks else ()
    typed = f"{source} {args}".rstrip()
    return Invocation(command, text, attached, TurnScope(allowed, source, model, notes, typed))


def trust_item(command: CustomCommand, built: Assembled | None = None, cwd: Path | None = None) -> TrustItem:
    """What the user approves when trusting a project command's `allowed-tools`."""
    from ..trust.items import make_item

    root = built.session.context.cwd if built is not None else cwd
    source = display(root, command.path) if root is not None else str(command.path)
    label = f"/{command.name} allowed-tools: {', '.join(command.allowed_tools)}"
    return make_item("command", source, label, {"name": command.name, "allowed_tools": list(command.allowed_tools)})


async def _checked(built: Assembled, tool: Tool, raw: Mapping[str, Any], what: str, source: str) -> Any:
    """The tool's arguments for `raw` if the policy allows the call, else why not."""
    try:
        args = tool.validate(raw)
        decision = await built.policy(tool, raw, ToolCallInfo())
    except Exception as exc:  # the input defeated a check: refuse
        return Failed(f"{source}: {what} was not run: {type(exc).__name__}: {exc}")
    if not isinstance(decision, Allow):
        return Failed(f"{source}: {what} was not run: {decision.message}")
    if decision.updated_input is not None:
        return tool.validate(decision.updated_input)
    return args


async def _run(built: Assembled, line: str, source: str) -> str | Failed:
    """The output of the command `line` (a `` !`…` ``), through the Bash tool and the permission policy."""
    bash = built.session.tools.get("Bash")
    if bash is None:
        return Failed(f"{source}: !`{line}` needs the Bash tool, which this session does not have")
    args = await _checked(built, bash, {"command": line}, f"!`{line}`", source)
    if isinstance(args, Failed):
        return args
    output = await bash.call(args, built.session.context)
    return output.content.rstrip("\n")


async def _attach(built: Assembled, mention: str, source: str) -> ContentBlock | Failed | None:
    """The file `@mention` names, read as the Read tool shows it; None when it names no file (left as text)."""
    root = built.session.context.cwd
    path = Path(mention).expanduser()
    path = path if path.is_absolute() else root / path
    read = built.session.tools.get("Read")
    if read is None or not path.is_file():
        return None
    args = await _checked(built, read, {"file_path": str(path)}, f"reading @{mention}", source)
    if isinstance(args, Failed):
        return args
    output = await read.call(args, built.session.context)
    return TextBlock(f"Contents of @{mention} ({display(root, path)}):\n\n{output.content}")
