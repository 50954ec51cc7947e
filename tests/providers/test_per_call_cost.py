"""The agent's own work per model call does not grow with the session: a long session through the production
assembly (real OpenAI-compatible provider over HTTP to the loopback fake server, real Read and Bash, the
transcript on disk), counting work instead of timing it.

Each request is the whole history, so serialising it must grow with the history; everything else — the
compaction stages, the estimates, the wire conversion, the "seen whole" ids — must only work on what was added
since the last call. Three things show it: consecutive requests are made of the very same message objects (and
wire dicts) except at their end, the memos compute about the same number of values on every call, and the
copies the stages make are not kept once per call.
"""

from __future__ import annotations

import gc
import weakref
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec
import pytest

from react_agent_mini.app import SessionOptions, build_session
from react_agent_mini.compact.pipeline import CompactOptions, compact_messages
from react_agent_mini.config import ProviderConfig
from react_agent_mini.events import QueryEvent, Terminal
from react_agent_mini.loop import whole_result_ids
from react_agent_mini.memo import computed_total, shared_prefix
from react_agent_mini.messages import Message, ToolResultBlock, ToolUseBlock, user_text
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.providers.openai_compat import OpenAICompatProvider, to_openai_messages

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall

CALLS = 60
KEEP_RECENT = 4  # the default micro_keep_recent: results newer than this are whole


def script(files: list[str]) -> list[Reply]:
    """Read a file, run `seq`, read the next file, ...: every result is over ①'s cap, most are cleared by ②."""
    replies = []
    for i in range(CALLS - 1):
        call = (
            ToolCall("Read", {"file_path": files[i // 2]})
            if i % 2 == 0
            else ToolCall("Bash", {"command": f"seq 1 {3000 + i}"})
        )
        replies.append(Reply(text=f"Step {i}.", tool_calls=[call]))
    return [*replies, Reply(text="Done.")]


@pytest.mark.parametrize(
    ("profile", "threshold", "least_breaks", "most_breaks"),
    [
        # the seed's ② is at work from the tenth call or so; once, when the history first passes the threshold,
        # it clears every old result at once
        ("seed", "30000", 1, 1),
        # v2 (30,000 chars = 7,500 tokens here: over it at nearly every call) clears the results that just
        # left its protected tail, so the prefix holds everything older
        ("v2", "30000", 0, 0),
    ],
)
async def test_per_call_work_does_not_grow_with_the_history(
    fake_llm: FakeLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    profile: str,
    threshold: str,
    least_breaks: int,
    most_breaks: int,
) -> None:
    monkeypatch.setenv("COMPACT_PROFILE", profile)
    monkeypatch.setenv("COMPACT_THRESHOLD_CHARS", threshold)
    files = []
    for i in range(CALLS // 2):
        name = f"m{i}.py"
        (tmp_path / name).write_text("".join(f"def function_{i}_{n}(value):  return value * {n}\n" for n in range(150)))
        files.append(name)
    fake_llm.enqueue(*script(files))
    config = ProviderConfig("openai", "deepseek-chat", base_url=fake_llm.openai_base_url, api_key="test-key")
    built = build_session(config, SessionOptions(tmp_path, max_turns=CALLS))
    session, provider = built.session, built.provider
    assert isinstance(provider, OpenAICompatProvider)
    inner = session.deps.call_model
    requests: list[tuple[Message, ...]] = []
    bodies: list[list[Any]] = []
    work: list[int] = []  # values the memos computed since the previous call

    def call_model(request: ModelRequest) -> Any:
        work.append(computed_total())
        requests.append(tuple(request.messages))
        wire = provider.build_body(request)["messages"]
        assert wire[0]["role"] == "system"
        bodies.append(wire[1:])  # the history's messages on the wire
        return inner(request)

    session.deps = msgspec.structs.replace(session.deps, call_model=call_model)
    try:
        events: list[QueryEvent] = [e async for e in session.run_turn("Read the files and count.")]
    finally:
        await provider.aclose()
        built.recorder.close()
    assert len(requests) == CALLS and len(session.messages) == 2 * CALLS
    assert isinstance(events[-1], Terminal) and events[-1].reason == "completed"

    # 1. Each request is the previous one's messages, the very same objects, plus what was added since — but for
    #    the results that just aged out of ②'s keep-recent window (cleared now) and the newest ones, and the
    #    calls at which a stage cut deeper (see the parameters).
    def breaks(sequences: list[Any]) -> list[int]:
        return [
            i
            for i, (previous, current) in enumerate(pairwise(sequences))
            if shared_prefix(previous, current) < len(previous) - 2 * KEEP_RECENT
        ]

    assert least_breaks <= len(breaks(requests)) <= most_breaks, breaks(requests)
    assert any(r.content.startswith("[Old tool result content cleared]") for m in requests[-1] for r in m.tool_results)
    # 2. So the provider converts only those: the rest of the body is the very same wire dicts as last time.
    assert breaks(bodies) == breaks(requests)
    # 3. The work the stages, estimates and conversions do per call stays the same as the history grows.
    per_call = [b - a for a, b in pairwise(work)]
    early, late = per_call[10:20], per_call[-10:]
    assert max(late) <= 1.5 * max(early) + 5, (early, late)
    assert sum(late) <= 1.5 * sum(early), (early, late)
    # 4. And the copies the stages make are made once, not once per call (the memos used to keep every call's
    #    copies alive: memory grew with calls × history).
    ids = {m.id for m in session.messages}
    gc.collect()
    live = sum(1 for obj in gc.get_objects() if isinstance(obj, Message) and obj.id in ids)
    assert live <= 3 * len(session.messages), live


def test_what_the_stages_remember_does_not_keep_a_dropped_history_alive() -> None:
    """After `/clear` or a summary the old history must go: the memos behind the flat per-call cost remember
    what they computed only as long as the messages live."""

    def history(tag: str, turns: int) -> list[Message]:
        out: list[Message] = [user_text(f"{tag}: go", id=f"{tag}-u")]
        for i in range(turns):
            use = ToolUseBlock(f"{tag}{i}", "Bash", {"command": f"seq 1 {i}"})
            out.append(Message("assistant", (use,), id=f"{tag}-a{i}"))
            out.append(Message("user", (ToolResultBlock(use.id, f"{i}\n" * 3000),), id=f"{tag}-r{i}"))
        return out

    def one_call(messages: list[Message]) -> None:
        outbound = compact_messages(tuple(messages), CompactOptions(threshold_chars=20_000))
        to_openai_messages("system", outbound)
        whole_result_ids(messages, outbound)

    old = history("old", 20)
    for length in range(3, len(old) + 1, 2):  # a session growing call by call
        one_call(old[:length])
    probe = weakref.ref(old[-1])
    del old
    new = history("new", 15)
    for length in range(3, len(new) + 1, 2):
        one_call(new[:length])
    gc.collect()
    assert probe() is None
    assert not [o for o in gc.get_objects() if isinstance(o, Message) and o.id.startswith("old-")]
