"""ram's own work per model call stays flat as a session grows: counted in Python function calls, not timed.

A long session through the production assembly (`build_session`: the real OpenAI-compatible provider over HTTP
to the loopback fake server, real Read and Grep, compaction, the transcript on disk), with small results so the
request stays under the compaction threshold and nothing changes from call to call but the history's length.
Serialising and sending the request must grow with it (it is sent whole): that is json's C work and the event
loop's and httpx's, not ram's. Every function of ram's own that the main thread enters between one model call
and the next is counted (`sys.setprofile`, which sees only this thread: the fake server's is not counted). Work
proportional to the history — a loop over every message, per call — shows as calls that grow with it; it used
to (the check that a new call id is not taken walked every message of the request: 702 calls per model call
early, 1,100 late).
"""

from __future__ import annotations

import statistics
import sys
from itertools import pairwise
from pathlib import Path
from types import FrameType
from typing import Any

import msgspec

import react_agent_mini
from react_agent_mini.app import SessionOptions, build_session
from react_agent_mini.config import ProviderConfig
from react_agent_mini.events import Terminal
from react_agent_mini.providers.base import ModelRequest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall

CALLS = 160
OURS = str(Path(react_agent_mini.__file__).parent)
"""ram's own code: the event loop's and httpx's share grows with the bytes sent, which is sending the request."""


def script() -> list[Reply]:
    """Read two lines of a file, Grep for two file names, Echo: small results, one call each."""
    replies = []
    for i in range(CALLS - 1):
        call = [
            ToolCall("Read", {"file_path": f"m{i % 20}.py", "offset": 1 + i % 30, "limit": 2}),
            ToolCall("Grep", {"pattern": f"function_{i % 7}_", "output_mode": "files_with_matches", "head_limit": 2}),
            ToolCall("Echo", {"message": f"step {i}"}),
        ][i % 3]
        replies.append(Reply(text="Next.", tool_calls=[call]))
    return [*replies, Reply(text="Done.")]


async def test_python_work_per_call_does_not_grow_with_the_history(
    fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("CONTEXT_WINDOW_TOKENS", "400000")
    monkeypatch.setenv("COMPACT_THRESHOLD_CHARS", "480000")  # 120k tokens: never reached here
    for i in range(20):
        (tmp_path / f"m{i}.py").write_text(
            "".join(f"def function_{i}_{n}(value):  return value * {n}\n" for n in range(40))
        )
    fake_llm.enqueue(*script())
    config = ProviderConfig("openai", "deepseek-chat", base_url=fake_llm.openai_base_url, api_key="test-key")
    built = build_session(config, SessionOptions(tmp_path, max_turns=CALLS))
    session, provider = built.session, built.provider
    inner = session.deps.call_model
    counted = [0]
    at_call: list[int] = []

    def count(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and OURS in frame.f_code.co_filename:
            counted[0] += 1

    def call_model(request: ModelRequest) -> Any:
        at_call.append(counted[0])
        return inner(request)

    session.deps = msgspec.structs.replace(session.deps, call_model=call_model)
    sys.setprofile(count)
    try:
        events = [event async for event in session.run_turn("Look around.")]
    finally:
        sys.setprofile(None)
        await provider.aclose()
        built.recorder.close()
    assert isinstance(events[-1], Terminal) and events[-1].reason == "completed"
    assert len(at_call) == CALLS and len(session.messages) == 2 * CALLS
    per_call = [b - a for a, b in pairwise(at_call)]
    # Medians over whole cycles of the three tools, early (a history of ~60 messages) and late (~300).
    early, late = statistics.median(per_call[30:60]), statistics.median(per_call[-30:])
    assert late <= 1.1 * early, (early, late)
