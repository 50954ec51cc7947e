"""Stage ② of the v4 pipeline (microcompact): over the threshold, old regenerable tool output goes first.

Only when the estimate is strictly above `threshold_chars`. Every tool_result except the newest
`micro_keep_recent` is a candidate; a candidate longer than `micro_min_chars` whose call names a COMPACTABLE
tool (Read, Write, Edit, Bash, Grep, Glob, any `mcp__*`) becomes the placeholder
`[Old tool result content cleared] tool=<Name> <file_path or path>` — the model can call the tool again, and
the hint says where. Other results (Echo, Skill, ...) stay: they cannot be regenerated. The loop injects
stage ② through `QueryDeps.microcompact` (pipeline.py's, which runs this for the v4 pipeline); profile v2's
② (economy.py) builds on the placeholders here.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import chain
from operator import is_not

import msgspec

from ..memo import IdentityMemo, PrefixMemo
from ..messages import Message, ToolResultBlock, ToolUseBlock
from ..trace import enabled, trace
from .common import call_for, is_compactable, path_hint, replace_tool_results, rewrite_results, same_messages
from .estimate import estimate_outbound_chars, utf16_len
from .lowwater import Candidate, low_water_plan
from .options import CompactOptions

MICROCOMPACT_NOTE = "[Old tool result content cleared]"
"""The placeholder's fixed start (English on purpose, and the same as Claude Code's, so models know it)."""


def placeholder(tool_use: ToolUseBlock) -> str:
    """`[Old tool result content cleared] tool=<Name> <hint>`, the hint left out when the input has none."""
    hint = path_hint(tool_use.input)
    return f"{MICROCOMPACT_NOTE} tool={tool_use.name} {hint}" if hint else f"{MICROCOMPACT_NOTE} tool={tool_use.name}"


def clearable(block: ToolResultBlock, tool_use: ToolUseBlock | None, min_chars: int) -> ToolUseBlock | None:
    """`tool_use` (the call behind `block`) when the result may be cleared: long enough, from a compactable
    tool, and not already the placeholder."""
    if tool_use is None or not is_compactable(tool_use.name):
        return None
    return _clearable(block, lambda b: _may_clear(b, tool_use, min_chars), key=(tool_use, min_chars))


def _may_clear(block: ToolResultBlock, tool_use: ToolUseBlock, min_chars: int) -> ToolUseBlock | None:
    if block.content == placeholder(tool_use) or (utf16_len(block.content) <= min_chars and not block.images):
        return None
    return tool_use


def cleared(block: ToolResultBlock, tool_use: ToolUseBlock) -> ToolResultBlock:
    """`block` as the placeholder for `tool_use` (the same copy on every call)."""
    return _cleared(
        block, lambda b: msgspec.structs.replace(b, content=placeholder(tool_use), images=(), cut=None), key=tool_use
    )


_clearable: IdentityMemo[ToolUseBlock | None] = IdentityMemo()
_cleared: IdentityMemo[ToolResultBlock] = IdentityMemo()


def results_with_calls(messages: Sequence[Message]) -> list[tuple[int, ToolResultBlock, ToolUseBlock | None]]:
    """Every tool_result in order: (index of its message, the result, its call)."""
    return [
        (index, block, call_for(messages, index, block.tool_use_id))
        for index, message in enumerate(messages)
        if message.role == "user"
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


def candidates(messages: Sequence[Message], min_chars: int) -> list[Candidate]:
    """Every tool_result in order, as the low-water plan sees it."""
    out: list[Candidate] = []
    for index, block, call in results_with_calls(messages):
        tool_use = clearable(block, call, min_chars)
        saved = utf16_len(block.content) - utf16_len(placeholder(tool_use)) if tool_use else 0
        out.append(Candidate(index, block, tool_use, saved))
    return out


def clear_old_results(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """② of the v4 pipeline: replace old, large, compactable tool_results with a placeholder when over the
    threshold; the same list otherwise (pipeline.py runs it for that profile)."""
    estimated = estimate_outbound_chars(messages)
    if estimated <= options.threshold_chars:
        # Also right for low water: no earlier point of its replay can have been over the threshold either.
        return messages
    if options.low_water:
        return _low_water(messages, options, estimated)
    # Every result but the newest `micro_keep_recent` is a candidate. The messages whose results all lie before
    # that cut are cleared as a prefix the next call shares (only what aged past the cut since costs work); the
    # message holding the cut is cleared up to it; the rest go as they are.
    counts = _result_counts(messages, _running_count)  # counts[i]: tool_results in messages[: i + 1]
    cutoff = max(0, (counts[-1] if counts else 0) - options.micro_keep_recent)
    whole = bisect_right(counts, cutoff)
    min_chars = options.micro_min_chars

    def clear_all(block: ToolResultBlock, index: int) -> ToolResultBlock | None:
        return _clear_one(messages, index, block, min_chars)

    def step(items: Sequence[Message], index: int, _done: Sequence[Message]) -> Message:
        return rewrite_results(items[index], index, clear_all)[0]

    out = list(_micro_cleared(messages[:whole], step, min_chars))
    if whole < len(messages):
        left = cutoff - (counts[whole - 1] if whole else 0)  # results of messages[whole] before the cut

        def clear_some(block: ToolResultBlock, index: int) -> ToolResultBlock | None:
            nonlocal left
            left -= 1
            return _clear_one(messages, index, block, min_chars) if left >= 0 else None

        out.append(rewrite_results(messages[whole], whole, clear_some)[0])
        out.extend(messages[whole + 1 :])
    if same_messages(out, messages):
        return messages
    _trace_micro(messages, out, estimated, options)
    return out


def _clear_one(
    messages: Sequence[Message], index: int, block: ToolResultBlock, min_chars: int
) -> ToolResultBlock | None:
    """The placeholder for `block` (in `messages[index]`) when it may be cleared, else None."""
    tool_use = clearable(block, call_for(messages, index, block.tool_use_id), min_chars)
    return None if tool_use is None else cleared(block, tool_use)


def _running_count(messages: Sequence[Message], index: int, counts: Sequence[int]) -> int:
    before = counts[index - 1] if index else 0
    return before + sum(isinstance(b, ToolResultBlock) for b in messages[index].content)


_result_counts: PrefixMemo[Message, int] = PrefixMemo()
_micro_cleared: PrefixMemo[Message, Message] = PrefixMemo()


def _trace_micro(messages: Sequence[Message], out: Sequence[Message], estimated: int, options: CompactOptions) -> None:
    """The two trace lines of a ② that changed something (counting walks the history: only when tracing)."""
    if not enabled():
        return
    blocks = chain.from_iterable(m.content for m in out)
    replaced = sum(map(is_not, blocks, chain.from_iterable(m.content for m in messages)))
    trace("compact.micro", replaced=replaced)
    trace(
        "compact.run",
        stage="micro",
        before=len(messages),
        after=len(out),
        estimated=estimated,
        overThreshold=estimated > options.threshold_chars,
        strategy="micro",
    )


def _clear(
    messages: Sequence[Message], targets: dict[int, ToolUseBlock], estimated: int, options: CompactOptions
) -> Sequence[Message]:
    """`messages` with the blocks in `targets` (by identity) replaced by their placeholder."""
    if not targets:
        return messages

    def clear(block: ToolResultBlock, _index: int) -> ToolResultBlock | None:
        tool_use = targets.get(id(block))
        return None if tool_use is None else cleared(block, tool_use)

    out, replaced = replace_tool_results(messages, clear)
    if not replaced:
        return messages
    _trace_micro(messages, out, estimated, options)
    return out


def _low_water(messages: Sequence[Message], options: CompactOptions, estimated: int) -> Sequence[Message]:
    """Low-water mode: ② and ③ planned together and applied here, so that what is measured is exactly what
    is sent (③ cannot see the sizes before the clears); ③ then finds nothing left to do."""
    plan = low_water_plan(messages, options, candidates(messages, options.micro_min_chars))
    out = _clear(
        messages, {id(c.block): c.tool_use for c in plan.cleared if c.tool_use is not None}, estimated, options
    )
    if plan.cut <= 0:
        return out
    kept = list(out[plan.cut :])
    size = estimate_outbound_chars(out)
    trace(
        "compact.run",
        stage="retain",
        before=len(out),
        after=len(kept),
        droppedMessages=plan.cut,
        estimated=size,
        overThreshold=size > options.threshold_chars,
        strategy="retain",
    )
    return kept
