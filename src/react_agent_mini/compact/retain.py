"""Stage ③ of the v4 pipeline (retain tail): the deterministic stand-in for an LLM summary.

It re-estimates first: when ② brought the estimate back to `threshold_chars` or under, it does nothing ("if the
earlier step was enough, the later one adds nothing"). Still over and longer than `max_messages`: keep the last
`max_messages`, moving the cut forward to the first user message made only of text, so no tool_result is ever
separated from its tool_use. No such message: unchanged. With `low_water_percent` the cut is replayed and sticky
instead (lowwater.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..messages import Message
from ..trace import trace
from .estimate import estimate_outbound_chars
from .lowwater import low_water_plan
from .options import CompactOptions


def retain_tail(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """③ of the v4 pipeline: drop the oldest turns when the re-estimate is still over the threshold; the same
    list otherwise (pipeline.py runs it for that profile)."""
    estimated = estimate_outbound_chars(messages)
    # Also right for low water: no earlier point of its replay can have been over a limit the whole is under.
    if estimated <= options.threshold_chars or len(messages) <= options.max_messages:
        return messages
    if options.low_water:
        # ② applied the joint plan, cut included; this replay (on the sizes ② left) only acts when ② did not
        # run the plan, e.g. a test's no-op microcompact.
        start = low_water_plan(messages, options, ()).cut
    else:
        start = _first_user_text(messages, len(messages) - options.max_messages)
    if start <= 0:
        return messages
    out = list(messages[start:])
    trace(
        "compact.run",
        stage="retain",
        before=len(messages),
        after=len(out),
        droppedMessages=start,
        estimated=estimated,
        overThreshold=estimated > options.threshold_chars,
        strategy="retain",
    )
    return out


def _first_user_text(messages: Sequence[Message], start: int) -> int:
    """Index of the first user text message at or after `start`; -1 when there is none."""
    for index in range(max(start, 0), len(messages)):
        if messages[index].is_user_text:
            return index
    return -1
