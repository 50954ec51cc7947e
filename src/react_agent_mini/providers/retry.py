"""Retries with exponential backoff and jitter around one streamed model call.

Transient failures (429, 408/409/5xx/529, connection errors, a stream dropped midway) are retried from the
start, honouring the server's `retry-after`; anything else, or the last failure, is raised to the caller. A
failed attempt never leaves half an assistant message behind: only a complete `ModelResponse` ends a call.

A kind of failure may allow fewer attempts than the policy (`ProviderError.max_attempts`): a tool call the server
refused as invalid (`ModelCallInvalid`) is tried once more, and then, instead of failing the turn, the call ends in
a response that tells the model its call was invalid (`invalid_call.py`).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing

import msgspec

from ..events import ModelEvent, StreamRetry, TextDelta, ThinkingDelta
from .base import ModelProvider, ModelRequest
from .errors import ModelCallInvalid, ProviderError


class RetryPolicy(msgspec.Struct, frozen=True):
    """How hard to try."""

    max_attempts: int = 5
    """Attempts in total (the first one included)."""
    base_delay: float = 0.5
    """Seconds before the first retry; doubles each time."""
    max_delay: float = 20.0
    """Cap on the computed backoff."""
    max_retry_after: float = 60.0
    """Cap on a server-requested wait."""

    def delay(self, failed_attempt: int, retry_after: float | None, rand: Callable[[], float]) -> float:
        """Seconds to wait after attempt number `failed_attempt` failed."""
        if retry_after is not None:
            return max(0.0, min(retry_after, self.max_retry_after))
        backoff = min(self.max_delay, self.base_delay * 2 ** (failed_attempt - 1))
        return float(backoff * (0.5 + rand() / 2))  # "equal jitter": keeps at least half the backoff


async def stream_with_retry(
    start: Callable[[], AsyncGenerator[ModelEvent, None]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    rand: Callable[[], float] = random.random,
    request: ModelRequest | None = None,
) -> AsyncGenerator[ModelEvent, None]:
    """Run `start()` until it completes, retrying transient ProviderErrors (`StreamRetry` before each). `request`:
    the request `start` sends, which says whether the model was already told of a refused call."""
    attempt = 1
    while True:
        shown = False
        try:
            async with aclosing(start()) as events:
                async for event in events:
                    if isinstance(event, TextDelta | ThinkingDelta):
                        shown = True
                    yield event
            return
        except ProviderError as error:
            limit = min(policy.max_attempts, error.max_attempts or policy.max_attempts)
            if error.retryable and attempt >= limit and isinstance(error, ModelCallInvalid):
                from .invalid_call import already_told, invalid_call_response  # rare: off the common path

                if request is None or not already_told(request.messages):
                    yield invalid_call_response(error.failed_generation, error.message)
                    return
            if not error.retryable or attempt >= limit:
                raise
            wait = policy.delay(attempt, error.retry_after, rand)
            attempt += 1
            yield StreamRetry(attempt, limit, wait, error.message, shown)
            await sleep(wait)


def retrying(
    provider: ModelProvider, policy: RetryPolicy
) -> Callable[[ModelRequest], AsyncGenerator[ModelEvent, None]]:
    """The loop's `call_model` for `provider`: each request streamed, and retried per `policy`."""

    def call_model(request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        return stream_with_retry(lambda: provider.stream(request), policy, request=request)

    return call_model
