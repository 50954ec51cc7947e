"""A line that starts with `/`, resolved against a session: what every front end (REPL, headless, stream-json,
ACP, `ram mcp serve`, the library) runs for it.

Resolution order: built-in (`/compact`, `/init`) → custom command (`.claude/commands/`, never one named like a
built-in) → MCP prompt (`/<server>:<prompt>`) → skill (`/<skill-id>`) → not a command. A first word with a second
`/` (`/etc/hosts is empty?`) is a path, not a command. What is not a command is the front end's to decide: the REPL
says so, the others send the text as typed.

The outcome is one of:
- `Send`: a turn to run — this text after these context messages, with this scope (a custom command's
  `allowed-tools` and `model`);
- `Done`: the command ran without a turn (`/compact`) or cannot run (`error`); `text` says what happened;
- `Unknown`: not a command ram knows here; `message` says why when there is more to say than that.

The REPL's own built-ins (`/help`, `/status`, …) are its own; their names are still never taken by a custom command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypeAlias

import msgspec

from ..events import Compacted
from ..messages import Message

if TYPE_CHECKING:
    from ..custom_commands.scope import TurnScope
    from ..host import SessionHost


class Send(msgspec.Struct, frozen=True):
    """A command that becomes a turn."""

    text: str
    context: tuple[Message, ...] = ()
    scope: TurnScope | None = None
    kind: Literal["builtin", "command", "prompt", "skill"] = "command"
    notes: tuple[str, ...] = ()
    """Lines for the user (MCP servers that failed while the prompt was looked up)."""


class Done(msgspec.Struct, frozen=True):
    """A command that ran without a turn, or could not run (`error`)."""

    text: str
    error: bool = False
    compacted: Compacted | None = None
    kind: Literal["builtin", "command", "prompt", "skill"] = "command"
    notes: tuple[str, ...] = ()


class Unknown(msgspec.Struct, frozen=True):
    """Not a command here; `message`: why, when there is more to say (an MCP prompt no server offers)."""

    message: str = ""


Outcome: TypeAlias = Send | Done | Unknown


class Offer(msgspec.Struct, frozen=True):
    """A command to offer the user (a client's command list, completion)."""

    name: str
    description: str
    hint: str = ""
    """What its arguments are, as Claude Code's `argumentHint` (`[focus]`)."""
    kind: Literal["builtin", "command", "prompt", "skill"] = "command"


def is_command(line: str) -> bool:
    """True when `line` is a slash command (not a message that starts with a path)."""
    if not line.startswith("/"):
        return False
    first = line.split(maxsplit=1)[0]
    return len(first) > 1 and "/" not in first[1:]


def offered(host: SessionHost) -> list[Offer]:
    """What to offer now: the built-ins every front end runs, the custom commands, the prompts of the MCP servers
    connected so far, then the skills (a name offered once)."""
    from ..custom_commands.invoke import BUILTIN_COMMANDS

    built = host.built
    offers = [
        Offer(
            "compact", "Summarise the conversation now (your own messages are kept word for word)", "[focus]", "builtin"
        ),
        Offer("init", "Ask the agent to write or improve AGENTS.md for this project", "[notes]", "builtin"),
    ]
    offers += [
        Offer(c.name, c.description or "custom command", c.argument_hint)
        for c in built.commands.commands
        if c.name not in BUILTIN_COMMANDS  # a project's `/compact` never stands in for the built-in
    ]
    manager = built.mcp.manager
    if manager is not None:
        offers += [
            Offer(p.command, p.description or "MCP prompt", " ".join(a.name for a in p.arguments), "prompt")
            for p in manager.prompts()
        ]
    offers += [
        Offer(s.id, s.description or "skill", "[arguments]", "skill")
        for s in built.knowledge.skills
        if s.id not in BUILTIN_COMMANDS
    ]
    once: dict[str, Offer] = {}
    for offer in offers:
        once.setdefault(offer.name, offer)
    return list(once.values())


async def resolve(host: SessionHost, line: str) -> Outcome:
    """What `line` (`/name args`) does in this session."""
    if not is_command(line):
        return Unknown()
    from ..custom_commands.invoke import Failed, invoke, lookup

    name, _, args = line.strip()[1:].partition(" ")
    args = args.strip()
    built = host.built
    if name == "compact":
        return await _compact(host, args)
    if name == "init":  # the agent writes or improves AGENTS.md
        from .init_task import init_prompt

        return Send(init_prompt(built.session.context.cwd, args), kind="builtin")
    custom = lookup(built, line.strip())
    if custom is not None:
        invoked = await invoke(built, *custom)
        if isinstance(invoked, Failed):
            return Done(invoked.message, error=True)
        return Send(invoked.text, invoked.attached, invoked.scope)
    if ":" in name:
        return await _prompt(host, name, args)
    from ..tools.builtin.skill import SkillTool

    skills = built.session.tools.get("Skill")
    if isinstance(skills, SkillTool) and skills.find(name) is not None:
        output = skills.load(name, args or None)
        if output.is_error or not output.after:
            return Done(output.content, error=True, kind="skill")
        return Send(args, (Message("user", tuple(output.after), meta=True),), kind="skill")
    return Unknown()


async def _compact(host: SessionHost, focus: str) -> Done:
    """`/compact [focus]`: the summary's notice (a failed summary is an error)."""
    try:
        outcome = await host.session.compact_now(focus)
    except Exception as exc:  # a failed summary is this command's error, not the session's
        return Done(f"Compaction failed: {type(exc).__name__}: {exc}", error=True, kind="builtin")
    if isinstance(outcome, Compacted):
        return Done(outcome.notice, compacted=outcome, kind="builtin")
    return Done(outcome, error=outcome.startswith("Compaction failed"), kind="builtin")


async def _prompt(host: SessionHost, command: str, args: str) -> Outcome:
    """`/<server>:<prompt> [args]`: the prompt's messages, sent as the turn."""
    built = host.built
    manager = built.mcp.manager
    if manager is None:
        return Unknown(f"unknown command /{command} — no MCP servers are configured (.mcp.json)")
    notes = tuple(f"warning: {w}" for w in await built.mcp.join(built.session.tools))  # bounded wait
    known = [p.command for p in manager.prompts()]
    if command not in known:
        listing = ", ".join(f"/{c}" for c in known) or "none (the servers offer no prompts)"
        return Unknown(f"unknown MCP prompt /{command}; available: {listing}")
    server, _, name = command.partition(":")
    try:
        messages = await manager.run_prompt(server, name, args)
    except Exception as exc:  # an MCP failure is one line, never the end of the session
        return Done(f"MCP prompt failed: {exc}", error=True, kind="prompt", notes=notes)
    if not messages:
        return Done(f"/{command} returned nothing to send", error=True, kind="prompt", notes=notes)
    return Send("", tuple(messages), kind="prompt", notes=notes)
