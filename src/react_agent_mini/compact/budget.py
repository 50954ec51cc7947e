"""Stage ① of the outbound pipeline: no single tool_result may exceed `max_tool_result_chars`.

Runs before every model call, whatever the total: one huge Read must not wait for the history to overflow.
A cut result keeps its first `max_tool_result_chars` characters (UTF-16 units, as the seed counts them) and gets
a note saying it was cut and how to get the rest — for a Read, the offset to continue from, taken from the line
numbers Read puts in front of each line. The note depends only on the kept text and the call, so running the
stage again changes nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from ..messages import Message, ToolResultBlock, ToolUseBlock
from ..trace import trace
from .common import path_hint, replace_tool_results, tool_uses_by_id
from .estimate import utf16_len, utf16_prefix
from .options import CompactOptions

TRUNCATION_NOTE = "\n…[tool_result truncated by compaction"
PLACEHOLDER_PREFIX = "[Old tool result content cleared] tool="
"""How ②'s placeholders start (micro.py builds them; spelled here too to keep the modules free of a cycle)."""
"""How every truncation note starts (the rest says how much was kept and how to get the rest)."""

_NUMBERED_LINE = re.compile(r"(\d+)\t")


def truncation_note(kept: str, limit: int, tool_use: ToolUseBlock | None) -> str:
    """The note appended to a result cut to `kept`: what happened, and how the model can see the rest."""
    head = f"{TRUNCATION_NOTE} to its first {limit} characters."
    if tool_use is None:
        return head + "]"
    if tool_use.name == "Read":
        resume = _read_resume_line(kept)
        if resume is not None:
            target = path_hint(tool_use.input) or "the file"
            return f"{head} To see the rest, Read {target} with offset={resume}.]"
    if tool_use.name == "Bash":
        return (
            f"{head} To see the rest, run the command again with its output filtered (grep, head, tail) "
            "or redirected to a file you Read in parts.]"
        )
    return f"{head} To see the rest, call {tool_use.name} again with narrower arguments.]"


def _read_resume_line(kept: str) -> int | None:
    """The first line number Read showed only partly (or not at all) in `kept`; None for non-numbered text."""
    # The text after the last newline may have been cut mid-line: resume at the line before it plus one.
    end = kept.rfind("\n")
    if end < 0:
        match = _NUMBERED_LINE.match(kept)
        return int(match.group(1)) if match else None
    start = kept.rfind("\n", 0, end) + 1
    match = _NUMBERED_LINE.match(kept, start)
    if match:
        return int(match.group(1)) + 1
    # Not a numbered line (a note after the lines, or not Read's usual output): no offset to give.
    return None


def is_placeholder(content: str) -> bool:
    """True for ②'s `[Old tool result content cleared] tool=<Name> <path>` (one line)."""
    return content.startswith(PLACEHOLDER_PREFIX) and "\n" not in content


def _already_cut(content: str, limit: int, tool_use: ToolUseBlock | None) -> bool:
    """True when `content` is exactly what this stage produces for some text: cutting again would change it."""
    at = content.rfind(TRUNCATION_NOTE)
    if at < 0:
        return False
    kept = content[:at]
    return utf16_len(kept) <= limit and content[at:] == truncation_note(kept, limit, tool_use)


def apply_tool_result_budget(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """① Cut every tool_result longer than `options.max_tool_result_chars`; the same list when none is."""
    if not options.enabled:
        return messages
    limit = options.max_tool_result_chars
    uses: dict[str, ToolUseBlock] | None = None

    def cut(block: ToolResultBlock) -> ToolResultBlock | None:
        nonlocal uses
        if len(block.content) <= limit // 2 or utf16_len(block.content) <= limit:
            return None
        if is_placeholder(block.content):
            return None  # ②'s placeholder is already as small as a result gets; cutting it would lose its hint
        if uses is None:  # built only when something is over the limit
            uses = tool_uses_by_id(messages)
        tool_use = uses.get(block.tool_use_id)
        if _already_cut(block.content, limit, tool_use):
            return None
        kept = utf16_prefix(block.content, limit)
        return msgspec.structs.replace(block, content=kept + truncation_note(kept, limit, tool_use))

    out, truncated = replace_tool_results(messages, cut)
    if not truncated:
        return messages
    trace(
        "compact.run",
        stage="budget",
        before=len(messages),
        after=len(out),
        truncatedBlocks=truncated,
        strategy="truncate",
    )
    return out
