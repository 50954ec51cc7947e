"""The prompt-cache-friendly variant of stages ② and ③ (`low_water_percent`; off by default).

Why: providers bill a repeated request prefix at about a tenth of the price. Once the history is over the
threshold, the v4 pipeline's ③ keeps "the last 40 messages", so its cut moves on every call and every call misses the
cache; its ② clears one more result on every call as results age out of the keep-recent window.

How, without state: the stages are pure functions of the history, so each decision is *replayed* over the
points where the model was called before (after every user message that an assistant message follows, and at
the end). At each point a stage acts only when the part still sent passes its limit, and then cuts down to the
low-water mark (`low_water_percent` of the limit); between such points its decisions stand still. The history
only grows, so the replay over a longer history repeats every earlier decision: consecutive requests share
their prefix until the next cut.

② plans with ③ (`low_water_plan`) and applies the whole plan, the cut included: what the plan measures must be
exactly what is sent, and ③ no longer sees the sizes before the clears. ③ then finds nothing left to do; it
replays the cut alone when ② did not run the plan (a test's no-op microcompact).

Measured on a synthetic 150-turn session (455 calls, Read-heavy, threshold 80000): requests that do not extend
the previous one 312 → 69; share of request characters a prefix cache would serve 0.66 → 0.91 at 50%; cost
under cache pricing (read 0.1×, write 1.25×) -15% at 50%, -18% at 40%; peak request still under the threshold.
In exchange each request carries more: the kept part refills up to the threshold before the next cut instead
of being cut back to 40 messages on every call.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import NamedTuple

from ..messages import Message, ToolResultBlock, ToolUseBlock
from .estimate import message_chars
from .options import CompactOptions


def call_points(messages: Sequence[Message]) -> list[int]:
    """Indices after which the model was (or is about to be) called: a user message followed by an assistant
    message, and the last message."""
    points = [i for i in range(len(messages) - 1) if messages[i].role == "user" and messages[i + 1].role == "assistant"]
    if messages:
        points.append(len(messages) - 1)
    return points


class Candidate(NamedTuple):
    """One tool_result as ② sees it."""

    message_index: int
    """Index of the message holding it."""
    block: ToolResultBlock
    """The result itself."""
    tool_use: ToolUseBlock | None
    """Its call when the result may be cleared, else None."""
    saved: int
    """Characters clearing it would save."""


class LowWaterPlan(NamedTuple):
    """What ② and ③ do in low-water mode."""

    cleared: list[Candidate]
    """Results ② replaces with the placeholder, oldest first."""
    cut: int
    """Index of the first message ③ keeps (0 = none dropped)."""


def low_water_plan(
    messages: Sequence[Message], options: CompactOptions, candidates: Sequence[Candidate]
) -> LowWaterPlan:
    """② and ③ replayed together over every earlier call point (`candidates`: every tool_result in order).

    At each point, on the part still kept: when it is over the threshold, ② clears eligible results oldest
    first until it is at or under the low-water mark, never touching the newest `micro_keep_recent`; when it is
    still over and longer than `max_messages`, ③ moves the start forward to the first user text message at or
    after the low-water mark (`low_water_percent` of `max_messages` and of `threshold_chars`), or to the last one
    there is when none is that far. Measuring only the kept part matters: measured on the whole history, ②
    would clear one more result on every call once the history passed the threshold, as the v4 pipeline's does.
    """
    sizes = [message_chars(m) for m in messages]  # becomes the size as sent, clears applied
    boundaries = [i for i, m in enumerate(messages) if m.is_user_text]
    threshold = options.threshold_chars
    low_chars = threshold * options.low_water_percent // 100
    low_messages = options.max_messages * options.low_water_percent // 100
    cleared: list[Candidate] = []
    kept = 0  # chars of messages [cut, counted) as sent
    cut = counted = 0
    present = 0  # candidates [0, present) belong to counted messages
    done = 0  # candidates [0, done) were decided (cleared, kept, or dropped with their message)
    for point in call_points(messages):
        while counted <= point:
            kept += sizes[counted]
            counted += 1
        while present < len(candidates) and candidates[present].message_index <= point:
            present += 1
        if kept <= threshold:
            continue
        # ② on the kept part.
        limit = present - options.micro_keep_recent
        while done < limit and kept > low_chars:
            candidate = candidates[done]
            done += 1
            if candidate.tool_use is None or candidate.saved <= 0 or candidate.message_index < cut:
                continue
            cleared.append(candidate)
            sizes[candidate.message_index] -= candidate.saved
            kept -= candidate.saved
        # ③ when ② was not enough.
        if kept <= threshold or counted - cut <= options.max_messages:
            continue
        start, rest = cut, kept
        while start < counted and rest > low_chars:
            rest -= sizes[start]
            start += 1
        k = bisect_left(boundaries, max(counted - low_messages, start, cut + 1))
        if k == len(boundaries) or boundaries[k] > point:
            k = bisect_left(boundaries, counted) - 1  # none that deep yet: the deepest there is
        if k >= 0 and cut < boundaries[k] <= point:
            kept -= sum(sizes[cut : boundaries[k]])
            cut = boundaries[k]
    return LowWaterPlan(cleared, cut)
