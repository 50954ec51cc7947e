"""The slash commands a session offers the editor (`available_commands_update`), and what a prompt that starts
with one does.

The set is every front end's (`kit.commands`): `/compact [focus]`, `/init [notes]`, custom commands
(`.claude/commands/`), `/<server>:<prompt> [args]` (an MCP server's prompt) and `/<skill-id> [args]`. Any other
text that starts with `/` (a path, or a command ram does not know) goes to the model as typed, as the stream-json
driver does it. Editors only offer the listed commands.
"""

from __future__ import annotations

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from ..host import SessionHost
from ..kit.commands import Done as Done
from ..kit.commands import Send as Send
from ..kit.commands import Unknown, offered, resolve


def available(host: SessionHost) -> list[AvailableCommand]:
    """The commands to offer now (`kit.commands.offered`): the built-ins, custom commands, the prompts of the MCP
    servers connected so far, the skills."""
    return [_command(o.name, o.description, o.hint) for o in offered(host)]


async def run(host: SessionHost, text: str) -> Send | Done:
    """What the prompt `text` (starting with `/`) does; what is not a command is sent as typed."""
    outcome = await resolve(host, text)
    if isinstance(outcome, Unknown):
        return Send(text)
    return outcome


def _command(name: str, description: str, hint: str) -> AvailableCommand:
    given = AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None
    return AvailableCommand(name=name, description=description, input=given)
