"""The slash commands a session offers the editor (`available_commands_update`), and what a prompt that starts
with one does.

- `/compact [focus]` summarises the conversation now (your own messages are kept word for word).
- `/<name> [args]` runs a custom command (`.claude/commands/`, see `custom_commands`).
- `/<skill-id> [args]` loads a skill and sends the arguments.
- `/<server>:<prompt> [args]` sends an MCP server's prompt.

Any other text that starts with `/` (a path, or a command ram does not know) goes to the model as typed, as
the stream-json driver does it. Editors only offer the listed commands.
"""

from __future__ import annotations

import msgspec
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from ..events import Compacted
from ..host import SessionHost, TurnScope
from ..messages import Message


class Send(msgspec.Struct, frozen=True):
    """A command that becomes a turn: this text after these context messages."""

    text: str
    context: tuple[Message, ...] = ()
    scope: TurnScope | None = None
    """A custom command's allowed tools and model, for its turn."""


class Done(msgspec.Struct, frozen=True):
    """A command that ran without a turn: what to tell the user."""

    text: str
    compacted: Compacted | None = None


def available(host: SessionHost) -> list[AvailableCommand]:
    """The commands to offer now: `/compact`, the skills, then the prompts of the MCP servers connected so far."""
    offered = [
        _command("compact", "Summarise the conversation now (your own messages are kept word for word)", "focus")
    ]
    from ..custom_commands.invoke import BUILTIN_COMMANDS

    offered += [
        _command(c.name, c.description or "custom command", c.argument_hint)
        for c in host.built.commands.commands
        if c.name not in BUILTIN_COMMANDS  # a project's `/compact` never stands in for the built-in
    ]
    offered += [_command(s.id, s.description or "skill", "arguments") for s in host.built.knowledge.skills]
    manager = host.built.mcp.manager
    if manager is not None:
        for prompt in manager.prompts():
            hint = " ".join(a.name for a in prompt.arguments)
            offered.append(_command(prompt.command, prompt.description or "MCP prompt", hint))
    return offered


async def run(host: SessionHost, text: str) -> Send | Done:
    """What the prompt `text` (starting with `/`) does."""
    from ..custom_commands.invoke import Failed, invoke, lookup
    from ..tools.builtin.skill import SkillTool

    name, _, args = text[1:].partition(" ")
    args = args.strip()
    if name == "compact":
        try:
            outcome = await host.session.compact_now(args)
        except Exception as exc:  # a failed summary is this command's error, not the session's
            return Done(f"Compaction failed: {type(exc).__name__}: {exc}")
        return Done(outcome.notice, outcome) if isinstance(outcome, Compacted) else Done(outcome)
    custom = lookup(host.built, text)
    if custom is not None:
        invoked = await invoke(host.built, *custom)
        if isinstance(invoked, Failed):
            return Done(invoked.message)
        return Send(invoked.text, invoked.attached, invoked.scope)
    skills = host.session.tools.get("Skill")
    if isinstance(skills, SkillTool) and skills.find(name) is not None:
        output = skills.load(name, args or None)
        if output.is_error or not output.after:
            return Done(output.content)
        return Send(args, (Message("user", tuple(output.after), meta=True),))
    manager = host.built.mcp.manager
    if manager is not None and ":" in name:
        await host.built.mcp.join(host.session.tools)
        if name in {p.command for p in manager.prompts()}:
            server, _, prompt = name.partition(":")
            try:
                messages = await manager.run_prompt(server, prompt, args)
            except Exception as exc:  # an MCP failure is one line, never the end of the session
                return Done(f"MCP prompt failed: {exc}")
            return Send("", tuple(messages)) if messages else Done(f"/{name} returned nothing to send")
    return Send(text)


def _command(name: str, description: str, hint: str) -> AvailableCommand:
    given = AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=given)
