"""The outbound compaction pipeline: three stages run before every model call, on a copy of the history.

① `apply_tool_result_budget` → ② `microcompact_messages` (the loop calls it through `deps.microcompact`) →
③ `apply_retain_tail_if_needed`. Least painful first; each later stage looks at the earlier one's result. Two
profiles (options.py): `v2`, the default (① shape.py, ② and ③ economy.py), and `seed`, the seed's pipeline
exactly (budget.py, micro.py, retain.py, with lowwater.py as its option). Each
stage is a pure function that returns the very same list when it changes nothing, and keeps the identity of
every message and block it does not change. The session history is never modified; only an LLM summary
(`autocompact`) rewrites it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

from ..messages import Message
from .budget import TRUNCATION_NOTE, apply_tool_result_budget
from .estimate import estimate_outbound_chars
from .micro import MICROCOMPACT_NOTE, microcompact_messages
from .options import CompactOptions
from .retain import apply_retain_tail_if_needed

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
