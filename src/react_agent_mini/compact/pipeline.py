"""The outbound compaction pipeline: three stages run before every model call, on a copy of the history.

① `apply_tool_result_budget` → ② `microcompact_messages` (the loop calls it through `deps.microcompact`) →
③ `apply_retain_tail_if_needed`. Least painful first; each later stage looks at the earlier one's result. Two
profiles (options.py), and this module picks each stage's for the options it is given: `v2`, the default
(① shape.py, ② and ③ economy.py), and `seed`, the v4 pipeline exactly (budget.py, micro.py, retain.py, with
lowwater.py as its option); v2's modules build on the v4 pipeline's, never the other way round. Each
stage is a pure function that returns the very same list when it changes nothing, and keeps the identity of
every message and block it does not change. The session history is never modified; only an LLM summary
(`autocompact`) rewrites it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from ..messages import Message
from .budget import TRUNCATION_NOTE, cut_results
from .economy import drop_turns, make_room
from .estimate import estimate_outbound_chars
from .micro import MICROCOMPACT_NOTE, clear_old_results
from .options import CompactOptions
from .retain import retain_tail
from .shape import shape_results

__all__ = [
    "MICROCOMPACT_NOTE",
    "TRUNCATION_NOTE",
    "CompactOptions",
    "apply_retain_tail_if_needed",
    "apply_tool_result_budget",
    "compact_messages",
    "estimate_outbound_chars",
    "microcompact_messages",
]

Microcompact = Callable[[Sequence[Message], CompactOptions], Sequence[Message]]


def apply_tool_result_budget(
    messages: Sequence[Message], options: CompactOptions, *, quiet: bool = False
) -> Sequence[Message]:
    """① Cut every tool_result longer than `options.max_tool_result_chars` (v4, budget.py), or shape every result
    over `options.fresh_tokens` for its tool (v2, shape.py); the same list when none is. Run on the same
    history again (the context meter measures it right before the loop sends it), it hands back what it made
    the first time without running again; `quiet`: no trace line (for the measurement)."""
    if not options.enabled:
        return messages
    if options.is_v4:
        return cut_results(messages, options, quiet=quiet)
    return shape_results(messages, options, quiet=quiet)


def microcompact_messages(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """② Replace old, large, compactable tool_results with a placeholder when over the threshold (v4, micro.py);
    make room the cache-friendly way, dropped turns included (v2, economy.py)."""
    if not options.enabled:
        return messages
    return clear_old_results(messages, options) if options.is_v4 else make_room(messages, options)


def apply_retain_tail_if_needed(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """③ Drop the oldest turns when the re-estimate is still over the threshold (v4, retain.py); for v2 nothing
    after its ② (which ran the whole plan), else, after a replaced ②, the drops alone (economy.py)."""
    if not options.enabled:
        return messages
    return retain_tail(messages, options) if options.is_v4 else drop_turns(messages, options)


def compact_messages(
    messages: Sequence[Message],
    options: CompactOptions | None = None,
    microcompact: Microcompact = microcompact_messages,
) -> Sequence[Message]:
    """All three stages at once, as the loop runs them (for tests and tools); `options` default to the
    environment. `microcompact` must be synchronous: the loop, not this helper, is where an async one belongs."""
    options = CompactOptions.from_env() if options is None else options
    if not options.enabled:
        return messages
    out = apply_tool_result_budget(messages, options)
    reduced = microcompact(out, options)
    if inspect.isawaitable(reduced):
        close = getattr(reduced, "close", None)
        if close is not None:
            close()  # never awaited: close it so Python does not warn about a forgotten coroutine
        raise TypeError("compact_messages runs microcompact synchronously; await an async one in the loop instead")
    return apply_retain_tail_if_needed(reduced, options)
