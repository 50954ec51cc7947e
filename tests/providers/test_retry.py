"""Retries: which failures are retried, how long we wait, and what the caller sees."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import pytest

from react_agent_mini.events import ModelEvent, ModelResponse, StreamRetry, TextDelta
from react_agent_mini.providers.errors import (
    AuthenticationError,
    BadRequestError,
    ConnectionFailed,
    ProviderError,
    RateLimitError,
    ServerError,
    StreamInterrupted,
    error_for_status,
)
from react_agent_mini.providers.retry import RetryPolicy, stream_with_retry

from ..scripted import reply


def flaky(*failures: ProviderError, partial: str = ""):
    """A start() that fails with each error in turn (after yielding `partial`), then succeeds."""
    attempts: list[int] = []

    async def start() -> AsyncGenerator[ModelEvent, None]:
        attempts.append(1)
        n = len(attempts)
        if partial:
            yield TextDelta(partial)
        if n <= len(failures):
            raise failures[n - 1]
        yield reply("ok")

    return start, attempts


async def collect(start, policy: RetryPolicy, sleeps: list[float]) -> list[ModelEvent]:
    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)

    return [e async for e in stream_with_retry(start, policy, sleep=fake_sleep, rand=lambda: 1.0)]


async def test_transient_failures_are_retried_with_exponential_backoff() -> None:
    start, attempts = flaky(ServerError("500"), ConnectionFailed("refused"), StreamInterrupted("dropped"))
    sleeps: list[float] = []
    events = await collect(start, RetryPolicy(max_attempts=5, base_delay=0.5), sleeps)
    assert len(attempts) == 4
    assert sleeps == [0.5, 1.0, 2.0]
    retries = [e for e in events if isinstance(e, StreamRetry)]
    assert [(r.attempt, r.reason) for r in retries] == [(2, "500"), (3, "refused"), (4, "dropped")]
    assert isinstance(events[-1], ModelResponse)


async def test_retry_after_is_honoured_and_capped() -> None:
    start, _ = flaky(RateLimitError("429", retry_after=3.0), RateLimitError("429", retry_after=999))
    sleeps: list[float] = []
    await collect(start, RetryPolicy(max_attempts=3, max_retry_after=60), sleeps)
    assert sleeps == [3.0, 60]


async def test_jitter_keeps_at_least_half_the_backoff() -> None:
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0)
    assert policy.delay(1, None, lambda: 0.0) == 0.5
    assert policy.delay(1, None, lambda: 1.0) == 1.0
    assert policy.delay(10, None, lambda: 1.0) == 8.0


@pytest.mark.parametrize("error", [BadRequestError("400"), AuthenticationError("401"), ProviderError("other")])
async def test_permanent_failures_are_not_retried(error: ProviderError) -> None:
    start, attempts = flaky(error)
    with pytest.raises(type(error)):
        await collect(start, RetryPolicy(), [])
    assert len(attempts) == 1


async def test_gives_up_after_max_attempts_with_the_last_error() -> None:
    start, attempts = flaky(*(ServerError(f"529 #{i}") for i in range(10)))
    with pytest.raises(ServerError, match="529 #2"):
        await collect(start, RetryPolicy(max_attempts=3), [])
    assert len(attempts) == 3


async def test_retry_after_output_was_shown_is_flagged() -> None:
    start, _ = flaky(StreamInterrupted("dropped"), partial="Hel")
    events = await collect(start, RetryPolicy(), [])
    retry = next(e for e in events if isinstance(e, StreamRetry))
    assert retry.discarded_output is True


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (401, AuthenticationError),
        (403, AuthenticationError),
        (400, BadRequestError),
        (404, BadRequestError),
        (408, ServerError),
        (409, ServerError),
        (429, RateLimitError),
        (500, ServerError),
        (503, ServerError),
        (529, ServerError),
    ],
)
def test_status_mapping(status: int, kind: type[ProviderError]) -> None:
    error = error_for_status(status, "detail", provider="openai", retry_after=None)
    assert type(error) is kind
    assert error.message.startswith(f"openai API error {status}: detail")
