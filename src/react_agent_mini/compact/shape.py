"""Profile v2's stage ①: each result shaped for its tool and sized to the model's window.

The newest results go whole up to `fresh_result_tokens` (a share of the window: a 30 KB file reaches the model
in one Read, as in Claude Code). A longer one is cut the way its tool's output is read:

- Bash: head and tail around one line saying how much of the middle was cut (budget.cut_head_tail, 40/60);
- Grep and Glob: whole entries (lines) from the start, and a note with how many were shown of how many and
  the offset to page on from (from the result's data, `search_result.SearchResult`: which lines are the listing,
  where the page starts, the total);
- Read and everything else: the head, cut back to a line boundary, and the note saying how to read the rest
  (for Read the offset, from its data: `read_result.ReadResult`).

The cap is in estimated tokens (tokens.py), so a Chinese result is cut where its cost says, not where its
characters would be for English. When v2 must make room (economy.py), older results fall to the v4 pipeline's
`max_tool_result_chars` cut (budget.cut_result): `demoted`. Each cut is computed once per block (../memo.py).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..memo import IdentityMemo
from ..messages import Message, ToolResultBlock, ToolUseBlock
from ..search_result import SearchResult
from ..shell_result import Omission
from . import hook_context
from .budget import (
    HEAD_TAIL_FAMILY,
    _snap_head,
    cut_result,
    head_tail,
    is_placeholder,
    rewrite_each_result,
    truncation_note,
)
from .common import call_for, family_of_call
from .estimate import utf16_len, utf16_prefix
from .options import CompactOptions
from .tokens import estimate_tokens, result_tokens

ENTRY_FAMILY = "search"
"""The tool family whose output is one entry per line (Grep, Glob): cut at entries, with counts."""
MARGIN_PERCENT = 97
"""A cut aims at this share of the cap, so the note it adds still fits."""


def shape_results(messages: Sequence[Message], options: CompactOptions, *, quiet: bool = False) -> Sequence[Message]:
    """① of profile v2: every tool_result over `options.fresh_tokens` shaped for its tool, and every hook context
    message over it cut (hook_context.py); the same list when none is (pipeline.py runs it for that profile).
    `quiet`: no trace line (a measurement, not a request)."""
    cap = options.fresh_tokens

    def cut(block: ToolResultBlock, index: int) -> ToolResultBlock | None:
        if len(block.content) <= cap // 3:  # cannot be over: no character is estimated above 3 tokens
            return None
        return fresh_cut(block, cap, call_for(messages, index, block.tool_use_id))

    def cut_hook_context(message: Message) -> Message | None:
        return hook_context.shaped(message, cap) if message.meta else None

    # a key of its own: v2's cuts are not v4's
    return rewrite_each_result(messages, cut, "shape", ("v2", cap), message_cut=cut_hook_context, quiet=quiet)


def fresh_cut(block: ToolResultBlock, cap_tokens: int, tool_use: ToolUseBlock | None) -> ToolResultBlock | None:
    """`block` shaped to at most `cap_tokens` estimated tokens, or None when it fits (computed once)."""
    return _fresh(block, lambda b: _shape(b, cap_tokens, tool_use), key=(cap_tokens, tool_use))


def demoted(block: ToolResultBlock, limit_chars: int, tool_use: ToolUseBlock | None) -> ToolResultBlock | None:
    """`block` at the v4 pipeline's cap (an older result when room is needed), or None when it is within it. A Bash
    result this stage cut already is cut again around the same middle, and says what both cuts left out."""
    if len(block.content) <= limit_chars // 2 or is_placeholder(block.content):
        return None
    if family_of_call(tool_use) == HEAD_TAIL_FAMILY and block.cut is not None:
        return _again(block, lambda b: _cut_again(b, limit_chars), key=limit_chars)
    return cut_result(block, limit_chars, tool_use)


def _cut_again(block: ToolResultBlock, limit: int) -> ToolResultBlock | None:
    if utf16_len(block.content) <= limit:
        return None
    both = head_tail(block.content, limit, earlier=block.cut, details=block.details)
    return None if both is None else msgspec.structs.replace(block, content=both[0], cut=both[1])


_again: IdentityMemo[ToolResultBlock | None] = IdentityMemo()


_fresh: IdentityMemo[ToolResultBlock | None] = IdentityMemo()


def _shape(block: ToolResultBlock, cap: int, tool_use: ToolUseBlock | None) -> ToolResultBlock | None:
    content = block.content
    tokens = result_tokens(block)
    if tokens <= cap or is_placeholder(content):
        return None
    chars = utf16_len(content)
    limit = chars * cap // tokens * MARGIN_PERCENT // 100
    for _ in range(4):  # the text cut may be denser than the whole: tighten until it fits
        text, line = _cut_text(content, limit, tool_use, block)
        if estimate_tokens(text) <= cap:
            break
        limit = limit * 9 // 10
    return msgspec.structs.replace(block, content=text, cut=line)


def _cut_text(
    content: str, limit: int, tool_use: ToolUseBlock | None, block: ToolResultBlock
) -> tuple[str, Omission | None]:
    """The text cut for its tool, and where a head+tail cut put its line (None for the other cuts)."""
    name = tool_use.name if tool_use is not None else ""
    family = family_of_call(tool_use)
    if family == HEAD_TAIL_FAMILY:
        both = head_tail(content, limit, details=block.details)
        if both is not None:
            return both
    if family == ENTRY_FAMILY:
        page = block.details if isinstance(block.details, SearchResult) else None
        return cut_entries(content, limit, name, page), None
    kept = _snap_head(utf16_prefix(content, limit))
    return kept + truncation_note(kept, limit, tool_use, block.details), None


def cut_entries(content: str, limit: int, tool: str, page: SearchResult | None = None) -> str:
    """The first whole entries (lines) of a Grep or Glob result that fit in `limit`, and a note: how many of
    how many were shown, and how to see the rest. Which lines are entries, where the page starts and how many
    there are come from the result's data, `page`; without it (no data) every line counts as one entry."""
    lines = content.split("\n")
    first, total = 0, None
    entries = lines
    if page is not None:
        first, total, entries = page.first, page.total, lines[: page.lines]
    shown: list[str] = []
    room = limit - 300  # the note
    for line in entries:
        room -= utf16_len(line) + 1
        if room < 0:
            break
        shown.append(line)
    total = len(entries) if total is None else total
    count = len(shown) if page is None else page.entries_in(len(shown))
    of = len(entries) if page is None else page.shown
    end = first + count
    if tool == "Grep":
        how = f"call Grep again with offset={end} (and head_limit for the page size), or narrow the search"
    else:
        how = "narrow the pattern or the path"
    note = (
        f"[… {count} of these {of} entries shown (results {first + 1}..{end} of {total}); the rest "
        f"were cut by compaction. To see more, {how} …]"
    )
    return "\n".join([*shown, note])
