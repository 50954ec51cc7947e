"""What fills a request: its parts by where they come from, for the message after a refusal nothing could answer.

When the model refuses a request as longer than its window and neither a summary nor clearing old results
made it fit, "the conversation is too long" helps nobody: the user needs to know what is long. A request is
split into the system prompt, the tool definitions, what the user typed, the model's own messages, each hook
event's context (hook_context.py), each tool's results, and other injected context (project files, a
summary, attachments); the largest part is named with its size in the request.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from .hook_context import hook_source

SYSTEM_PROMPT = "the system prompt"
TOOL_DEFINITIONS = "the tool definitions"
YOUR_MESSAGES = "your own messages"
MODEL_MESSAGES = "the model's own messages"
ADDED_CONTEXT = "context ram added (project instructions, a summary, attachments)"
HOOK_CONTEXT = "hook context from "
"""How the label of each hook event's context starts (`hook context from UserPromptSubmit`)."""


def parts(messages: Sequence[Message], system: str, tool_schemas: str) -> Counter[str]:
    """Characters of the request by part (labels as `largest` words them)."""
    sizes: Counter[str] = Counter()
    sizes[SYSTEM_PROMPT] += len(system)
    sizes[TOOL_DEFINITIONS] += len(tool_schemas)
    calls: dict[str, str] = {}
    for message in messages:
        if message.role == "assistant":
            for block in message.content:
                if isinstance(block, ToolUseBlock):
                    calls[block.id] = block.name
                    sizes[MODEL_MESSAGES] += len(str(block.input))
                elif isinstance(block, TextBlock):
                    sizes[MODEL_MESSAGES] += len(block.text)
                elif isinstance(block, ThinkingBlock):
                    sizes[MODEL_MESSAGES] += len(block.thinking)
            continue
        source = hook_source(message)
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                sizes[f"output of {calls.get(block.tool_use_id, 'a tool')}"] += len(block.content)
            elif isinstance(block, TextBlock):
                if source is not None:
                    sizes[HOOK_CONTEXT + source] += len(block.text)
                elif message.meta:
                    sizes[ADDED_CONTEXT] += len(block.text)
                else:
                    sizes[YOUR_MESSAGES] += len(block.text)
    return sizes


def largest(messages: Sequence[Message], system: str, tool_schemas: str) -> tuple[str, str]:
    """The label of the largest part, and `the largest part of the request is hook context from
    UserPromptSubmit (1.0 MB)`."""
    label, chars = parts(messages, system, tool_schemas).most_common(1)[0]
    return label, f"the largest part of the request is {label} ({size_text(chars)})"


def size_text(chars: int) -> str:
    """`1.0 MB`, `61 KB`, `950 characters`."""
    if chars >= 1_000_000:
        return f"{chars / 1_000_000:.1f} MB"
    if chars >= 10_000:
        return f"{chars // 1000} KB"
    if chars >= 1000:
        return f"{chars / 1000:.1f} KB"
    return f"{chars} characters"
