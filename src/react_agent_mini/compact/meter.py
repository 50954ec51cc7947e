"""The context meter: how much of the model's window the next request will fill.

The provider's reported input of the last call is exact for everything sent then (system prompt and tool
schemas included); what the history gained since — the answer itself and any tool results or user messages —
is estimated. Before the first call, or when the history was rewritten (`/clear`, a summary), or when the
provider reports no usage, the whole history is estimated. The session owns one meter and feeds it every
`AssistantTurn`.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from ..messages import Message, Usage
from .tokens import estimate_messages_tokens, estimate_tokens


class ContextReading(msgspec.Struct, frozen=True):
    """One reading of the meter."""

    tokens: int
    """Tokens the next request is expected to carry."""
    window: int
    """The model's context window in tokens."""
    exact_tokens: int
    """The part of `tokens` the provider reported (0 when all of it is estimated)."""

    @property
    def percent(self) -> int:
        """Share of the window in use, rounded (may pass 100 when the history no longer fits)."""
        return round(100 * self.tokens / self.window) if self.window > 0 else 0

    @property
    def estimated(self) -> bool:
        """True when nothing of it comes from the provider's report."""
        return self.exact_tokens == 0

    def label(self) -> str:
        """`ctx ~42%` for a status line; the tilde marks it as partly estimated."""
        return f"ctx ~{self.percent}%"


class ContextMeter:
    """Last reported input usage + an estimate of what was added since. Mutable; one per session."""

    def __init__(self) -> None:
        self._tokens = 0
        self._length = 0
        self._first: Message | None = None
        self._last: Message | None = None

    def observe(self, usage: Usage, history: Sequence[Message]) -> None:
        """Record the usage of the call whose answer is the last message of `history` (just appended)."""
        reported = usage.total_input_tokens
        if reported <= 0 or not history:
            self.reset()  # a provider that reports nothing: estimate everything
            return
        # The answer was not part of that input: count it by its reported output, or estimate it.
        answer = usage.output_tokens or estimate_messages_tokens(history[-1:])
        self._tokens = reported + answer
        self._length = len(history)
        self._first, self._last = history[0], history[-1]

    def reset(self) -> None:
        """Forget the last report (after `/clear` or when the history was rewritten)."""
        self._tokens = self._length = 0
        self._first = self._last = None

    def tokens(self, history: Sequence[Message], *, base_tokens: int = 0) -> tuple[int, int]:
        """(expected tokens of the next request, the part of it reported by the provider).

        `base_tokens`: the system prompt and tool schemas, counted only when everything must be estimated.
        """
        if self._matches(history):
            return self._tokens + estimate_messages_tokens(history[self._length :]), self._tokens
        return base_tokens + estimate_messages_tokens(history), 0

    def read(self, history: Sequence[Message], window: int, *, base_tokens: int = 0) -> ContextReading:
        """A reading for `history` against a window of `window` tokens."""
        tokens, exact = self.tokens(history, base_tokens=base_tokens)
        return ContextReading(tokens, window, exact)

    def _matches(self, history: Sequence[Message]) -> bool:
        """Whether `history` still extends the one the last report was about (same first and last message)."""
        if self._last is None or len(history) < self._length:
            return False
        return history[0] is self._first and history[self._length - 1] is self._last


def base_tokens(system: str, tool_schemas_json: str = "") -> int:
    """Estimated tokens of the fixed part of every request: the system prompt and the tools' JSON schemas."""
    return estimate_tokens(system) + estimate_tokens(tool_schemas_json)
