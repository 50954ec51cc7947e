"""Stage ② of the outbound pipeline (microcompact): over the threshold, old regenerable tool output goes first.

Only when the estimate is strictly above `threshold_chars`. Every tool_result except the newest
`micro_keep_recent` is a candidate; a candidate longer than `micro_min_chars` whose call names a COMPACTABLE
tool (Read, Write, Edit, Bash, Grep, Glob, any `mcp__*`) becomes the placeholder
`[Old tool result content cleared] tool=<Name> <file_path or path>` — the model can call the tool again, and
the hint says where. Other results (Echo, Skill, ...) stay: they cannot be regenerated. The loop injects this
stage through `QueryDeps.microcompact`.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..messages import Message, ToolResultBlock, ToolUseBlock
from ..trace import trace
from .common import is_compactable, path_hint, replace_tool_results, tool_uses_by_id
from .estimate import estimate_outbound_chars, utf16_len
from .lowwater import Candidate, low_water_plan
from .options import CompactOptions

MICROCOMPACT_NOTE = "[Old tool result content cleared]"
"""The placeholder's fixed start (English on purpose, and the same as Claude Code's, so models know it)."""


def placeholder(tool_use: ToolUseBlock) -> str:
    """`[Old tool result content cleared] tool=<Name> <hint>`, the hint left out when the input has none."""
    hint = path_hint(tool_use.input)
    return f"{MICROCOMPACT_NOTE} tool={tool_use.name} {hint}" if hint else f"{MICROCOMPACT_NOTE} tool={tool_use.name}"


def clearable(block: ToolResultBlock, uses: dict[str, ToolUseBlock], min_chars: int) -> ToolUseBlock | None:
    """The call behind `block` when its result may be cleared: long enough, from a compactable tool, and not
    already the placeholder."""
    tool_use = uses.get(block.tool_use_id)
    if tool_use is None or not is_compactable(tool_use.name):
        return None
    if block.content == placeholder(tool_use) or (utf16_len(block.content) <= min_chars and not block.images):
        return None
    return tool_use


def candidates(messages: Sequence[Message], uses: dict[str, ToolUseBlock], min_chars: int) -> list[Candidate]:
    """Every tool_result in order, as the low-water plan sees it."""
    out: list[Candidate] = []
    for index, message in enumerate(messages):
        if message.role != "user":
            continue
        for block in message.tool_results:
            tool_use = clearable(block, uses, min_chars)
            saved = utf16_len(block.content) - utf16_len(placeholder(tool_use)) if tool_use else 0
            out.append(Candidate(index, block, tool_use, saved))
    return out


def microcompact_messages(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """② Replace old, large, compactable tool_results with a placeholder when over the threshold."""
    if not options.enabled:
        return messages
    estimated = estimate_outbound_chars(messages)
    if estimated <= options.threshold_chars:
        # Also right for low water: no earlier point of its replay can have been over the threshold either.
        return messages
    uses = tool_uses_by_id(messages)
    if options.low_water:
        return _low_water(messages, options, uses, estimated)
    results = [b for m in messages if m.role == "user" for b in m.tool_results]
    cutoff = max(0, len(results) - options.micro_keep_recent)
    targets: dict[int, ToolUseBlock] = {}  # id(block) → its call
    for block in results[:cutoff]:
        tool_use = clearable(block, uses, options.micro_min_chars)
        if tool_use is not None:
            targets[id(block)] = tool_use
    return _clear(messages, targets, estimated, options)


def _clear(
    messages: Sequence[Message], targets: dict[int, ToolUseBlock], estimated: int, options: CompactOptions
) -> Sequence[Message]:
    """`messages` with the blocks in `targets` (by identity) replaced by their placeholder."""
    if not targets:
        return messages

    def clear(block: ToolResultBlock) -> ToolResultBlock | None:
        tool_use = targets.get(id(block))
        return None if tool_use is None else msgspec.structs.replace(block, content=placeholder(tool_use), images=())

    out, replaced = replace_tool_results(messages, clear)
    if not replaced:
        return messages
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
    return out


def _low_water(
    messages: Sequence[Message], options: CompactOptions, uses: dict[str, ToolUseBlock], estimated: int
) -> Sequence[Message]:
    """Low-water mode: ② and ③ planned together and applied here, so that what is measured is exactly what
    is sent (③ cannot see the sizes before the clears); ③ then finds nothing left to do."""
    plan = low_water_plan(messages, options, candidates(messages, uses, options.micro_min_chars))
    out = _clear(
        messages, {id(c.block): c.tool_use for c in plan.cleared if c.tool_use is not None}, estimated, options
    )
    if plan.cut <= 0:
        return out
    kept = list(out[plan.cut :])
    cleared = estimate_outbound_chars(out)
    trace(
        "compact.run",
        stage="retain",
        before=len(out),
        after=len(kept),
        droppedMessages=plan.cut,
        estimated=cleared,
        overThreshold=cleared > options.threshold_chars,
        strategy="retain",
    )
    return kept
