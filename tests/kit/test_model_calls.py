"""The build-time seam for the model calls (`app.ModelCalls`, what batch's limiter uses): a session's turns and its
summaries (`/compact`) both go through the calls it was built with — nothing is swapped in after assembly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from react_agent_mini.app import SessionOptions
from react_agent_mini.config import ProviderConfig
from react_agent_mini.events import Compacted, ModelEvent
from react_agent_mini.host import SessionHost
from react_agent_mini.providers.base import CallModel, ModelProvider, ModelRequest
from react_agent_mini.providers.retry import RetryPolicy, retrying

from ..fakes.fake_llm import FakeLLMServer, Reply


async def test_turns_and_summaries_use_the_model_calls_given_at_build(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    seen: list[int] = []

    def counted(provider: ModelProvider, policy: RetryPolicy) -> CallModel:
        real = retrying(provider, policy)

        def call_model(request: ModelRequest) -> AsyncIterator[ModelEvent]:
            seen.append(len(request.messages))
            return real(request)

        return call_model

    fake_llm.enqueue(Reply(text="one " * 50), Reply(text="two " * 50), Reply(text="A summary of it all."))
    config = ProviderConfig("openai", "deepseek-chat", base_url=fake_llm.openai_base_url, api_key="test-key")
    host = SessionHost.build(config, SessionOptions(tmp_path, strict_mcp=True), model_calls=counted)
    async with host:
        for text in ("first " * 40, "second " * 40):
            [e async for e in host.turn(text)]
        assert len(seen) == 2  # both turns' model calls
        outcome = await host.session.compact_now("")
    assert isinstance(outcome, Compacted), outcome
    assert len(seen) == 3 and len(fake_llm.requests) == 3  # the summary went through them too
