"""The outbound compaction seam: three stages run before every model call, on a copy of the history.

① `apply_tool_result_budget` → ② microcompact (through the loop's deps) → ③ `apply_retain_tail_if_needed`.
Each stage is a pure function that returns the very same list when it changes nothing. Until the compaction
issue lands they are identity functions; the loop already calls them in the seed's order so that issue only
fills them in.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..messages import Message


class CompactOptions(msgspec.Struct, frozen=True):
    """Knobs of the pipeline (defaults are the seed's)."""

    enabled: bool = True
    threshold_chars: int = 80_000
    max_tool_result_chars: int = 4000
    micro_keep_recent: int = 4
    micro_min_chars: int = 500
    max_messages: int = 40


def apply_tool_result_budget(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """① cap each tool_result (identity for now)."""
    return messages


def microcompact_messages(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """② clear old regenerable tool output when over the threshold (identity for now)."""
    return messages


def apply_retain_tail_if_needed(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """③ drop the oldest turns when still over the threshold (identity for now)."""
    return messages
