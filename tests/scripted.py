"""A scripted model for loop tests: it answers each call from a list and records every request it saw.

It stands in for the model only (the one thing outside the machine); everything else in those tests is real.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from react_agent_mini.events import ModelEvent, ModelResponse, StopReason, TextDelta
from react_agent_mini.messages import ContentBlock, Message, TextBlock, ToolUseBlock, Usage
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.providers.errors import ProviderError


def reply(*blocks: ContentBlock | str, stop: StopReason | None = None, usage: Usage | None = None) -> ModelResponse:
    """A response made of blocks (plain strings become text blocks)."""
    content = tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks)
    if stop is None:
        stop = "tool_use" if any(isinstance(b, ToolUseBlock) for b in content) else "end_turn"
    return ModelResponse(Message("assistant", content), stop, usage or Usage(10, 5))


def call(name: str, id: str, **args: Any) -> ToolUseBlock:
    return ToolUseBlock(id, name, args)


Step = ModelResponse | ProviderError | Callable[[ModelRequest], ModelResponse]


@dataclass
class ScriptedModel:
    """`call_model` for QueryDeps: answers from `steps` in order; the last step repeats."""

    steps: Sequence[Step]
    requests: list[ModelRequest] = field(default_factory=list)
    stream_delay: float = 0.0
    """Seconds to wait before the final response (lets a test abort mid-stream)."""
    slow_calls: set[int] | None = None
    """1-based call numbers that wait `stream_delay` (None = every call)."""

    async def __call__(self, request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        self.requests.append(request)
        step = self.steps[min(len(self.requests), len(self.steps)) - 1]
        if isinstance(step, ProviderError):
            raise step
        response = step(request) if callable(step) else step
        text = response.message.text
        for i in range(0, len(text), 3):
            yield TextDelta(text[i : i + 3])
        if self.stream_delay and (self.slow_calls is None or len(self.requests) in self.slow_calls):
            await asyncio.sleep(self.stream_delay)
        yield response
