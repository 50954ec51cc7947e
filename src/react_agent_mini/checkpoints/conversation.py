"""Cutting the conversation back to right after turn N: the history ends before turn N+1's message.

The session's history is cut in memory (what the model knew it read is forgotten, so it reads files again before
editing them) and the transcript gets a `rewind` record (`transcript.py`), so a resumed session loads the same
cut history; the file stays append-only. A summary (compaction) describes the turns it replaced, so a turn inside
the summarised part cannot be the place to cut: only its code can be rewound.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message
from .tracker import is_turn_start


class CannotCut(Exception):
    """The conversation cannot be cut there; the message says why."""


def cut_index(history: Sequence[Message], turn: int) -> int:
    """How many messages the history keeps when it is rewound to right after `turn` (1-based; 0: before turn 1)."""
    starts = [i for i, m in enumerate(history) if is_turn_start(m)]
    if not 0 <= turn <= len(starts):
        raise CannotCut(f"there is no turn {turn} (the conversation has {len(starts)})")
    keep = starts[turn] if turn < len(starts) else len(history)
    summarised = _summarised_until(history)
    if keep < summarised:
        raise CannotCut(
            f"{'the start' if turn == 0 else f'turn {turn}'} is in the part of the conversation a summary replaced "
            "(compaction), so the conversation "
            "cannot be cut there; its code can still be rewound"
        )
    return keep


def _summarised_until(history: Sequence[Message]) -> int:
    """The index of the first message after the summarised part (0 when nothing was summarised).

    After a summary the history is: boundary, context, summary, the user's messages from the summarised part (each
    followed by another message of the user's), then the tail, which starts with a message the user typed and an
    answer."""
    from ..compact.autocompact import SUMMARY_HEADER

    summary = max((i for i, m in enumerate(history) if m.meta and m.text.startswith(SUMMARY_HEADER)), default=-1)
    if summary < 0:
        return 0
    end = summary + 1
    while end + 1 < len(history) and is_turn_start(history[end]) and is_turn_start(history[end + 1]):
        end += 1
    return end


def next_id(history: Sequence[Message], keep: int) -> str:
    """The id of the first message a cut at `keep` drops ("" when none is dropped)."""
    return history[keep].id if keep < len(history) else ""
