"""A loaded transcript replayed as `session/update` notifications, so that `session/load` shows the editor the
conversation it reopens: what the user typed (`user_message_chunk`), the answers and reasoning
(`agent_message_chunk`, `agent_thought_chunk`), and every tool call as a card (`tool_call`) closed by its
result (`tool_call_update`).

Messages the agent injected are left out: context, skill bodies and summaries. Their tool results still close their
cards. A Write's diff shows the whole new text: what it replaced back then is not in the transcript.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from acp.helpers import update_agent_message_text, update_agent_thought_text, update_user_message_text
from acp.schema import UserMessageChunk

from ..messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from .updates import TurnUpdates, Update


def replay(messages: Sequence[Message], root: Path) -> list[UserMessageChunk | Update]:
    """The updates that show `messages`, in order."""
    cards = TurnUpdates(root, lambda _path: None, {})
    uses: dict[str, ToolUseBlock] = {}
    out: list[UserMessageChunk | Update] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, ToolResultBlock) and block.tool_use_id in uses:
                out += cards.finish(uses.pop(block.tool_use_id), block)
            elif isinstance(block, ToolUseBlock):
                uses[block.id] = block
                out.append(cards.announce(block))
            elif isinstance(block, ThinkingBlock) and block.thinking:
                out.append(update_agent_thought_text(block.thinking))
            elif isinstance(block, TextBlock) and block.text and message.role == "assistant":
                out.append(update_agent_message_text(block.text))
            elif isinstance(block, TextBlock) and block.text and not message.meta:
                out.append(update_user_message_text(block.text))
    return out
