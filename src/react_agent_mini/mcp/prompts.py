"""MCP prompts as session commands: `/server:prompt args` fetches the server's messages for the next turn.

The arguments line is split like a shell line (quotes group words); words fill the declared arguments in
order, and extra words go to the last one, so a one-argument prompt takes free text (`/docs:summarise this whole
sentence`). A missing required argument is an error naming it. Every message the server returns becomes a user
message marked `meta` (injected, not typed), whatever its role: the conversation must keep alternating.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import msgspec

from ..messages import Message, user_text
from . import McpError
from .adapter import cap_text, render_block

if TYPE_CHECKING:
    import mcp_types


class PromptArgument(msgspec.Struct, frozen=True):
    """One declared argument of a prompt."""

    name: str
    description: str = ""
    required: bool = False


class PromptInfo(msgspec.Struct, frozen=True):
    """A prompt a connected server offers."""

    server: str
    """The server's configured name."""
    name: str
    """The prompt's name on its server."""
    description: str = ""
    arguments: tuple[PromptArgument, ...] = ()

    @property
    def command(self) -> str:
        """What the user types after `/`: `server:prompt`."""
        return f"{self.server}:{self.name}"

    @property
    def usage(self) -> str:
        """`/server:prompt <required> [optional]`, for help lines and errors."""
        words = [f"<{a.name}>" if a.required else f"[{a.name}]" for a in self.arguments]
        return " ".join([f"/{self.command}", *words])


def prompt_info(server: str, prompt: mcp_types.Prompt) -> PromptInfo:
    """Our view of a listed prompt."""
    arguments = tuple(
        PromptArgument(a.name, (a.description or "").strip(), bool(a.required)) for a in prompt.arguments or ()
    )
    return PromptInfo(server, prompt.name, (prompt.description or "").strip(), arguments)


def bind_arguments(info: PromptInfo, args_line: str) -> dict[str, str]:
    """The prompts/get arguments for `args_line`, or McpError naming the missing required ones."""
    try:
        words = shlex.split(args_line)
    except ValueError:  # an unbalanced quote: the user meant the words, not a shell line
        words = args_line.split()
    names = [a.name for a in info.arguments]
    if names and len(words) > len(names):
        words = [*words[: len(names) - 1], " ".join(words[len(names) - 1 :])]
    bound = dict(zip(names, words, strict=False))
    missing = [a.name for a in info.arguments if a.required and not bound.get(a.name)]
    if missing:
        raise McpError(f"/{info.command} needs {', '.join(missing)} (usage: {info.usage})")
    return bound


def prompt_messages(result: mcp_types.GetPromptResult) -> list[Message]:
    """The prompt's messages as meta user messages (empty ones dropped)."""
    messages: list[Message] = []
    for message in result.messages:
        text = cap_text(render_block(message.content))
        if text.strip():
            messages.append(user_text(text, meta=True))
    return messages
