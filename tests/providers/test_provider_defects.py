"""Provider-edge defects of issue 12: repeated or missing tool-call ids, a stream that stalls, summary calls left
out of the session's totals, and an unknown model.

End to end where a user meets them: the CLI as a subprocess (or a real Session over real HTTP) against the
loopback fake LLM server, which validates requests as the real APIs do.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini.app import default_tools, production_deps
from react_agent_mini.events import Compacted, ToolResults
from react_agent_mini.loop import QueryDeps, QueryParams, query, whole_result_ids
from react_agent_mini.messages import Message, ToolResultBlock, Usage, user_text
from react_agent_mini.permissions.policy import allow_read_only
from react_agent_mini.pricing import cost_usd
from react_agent_mini.providers.errors import ModelNotFound, error_for_status
from react_agent_mini.providers.openai_compat import OpenAICompatProvider
from react_agent_mini.providers.retry import RetryPolicy
from react_agent_mini.session import Session
from react_agent_mini.tools.base import ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool

from ..fakes.fake_llm import FakeLLMServer, HttpError, Reply, Stall, ToolCall
from ..fakes.fake_llm import Usage as WireUsage
from ..scripted import ScriptedModel, call, reply
from ..test_cli import ECHO, WIRES, assert_no_traceback, env_for, ram

# ---- item 1: every tool call gets exactly one result the model can tell apart ----

ID_VARIANTS: dict[str, dict[str, Any]] = {
    "same": {"id": "call_0"},  # some local servers number every call call_0
    "empty": {"id": ""},
    "missing": {"omit_id": True},
}


def echo(message: str, **id_fields: Any) -> ToolCall:
    return ToolCall("Echo", {"message": message}, **id_fields)


def calls_and_results(wire: str, body: dict[str, Any]) -> tuple[list[str], list[tuple[str, str]]]:
    """The ids of every tool call in a request, and every (answered id, result text), in order."""
    messages = body["messages"]
    if wire == "openai":
        ids = [c["id"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
        results = [(m["tool_call_id"], m["content"]) for m in messages if m["role"] == "tool"]
        return ids, results
    blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
    ids = [b["id"] for b in blocks if b["type"] == "tool_use"]
    results = [(b["tool_use_id"], b["content"]) for b in blocks if b["type"] == "tool_result"]
    return ids, results


@pytest.mark.parametrize("variant", ID_VARIANTS)
@pytest.mark.parametrize("wire", WIRES)
def test_calls_sharing_one_id_each_get_their_own_result(
    wire: str, variant: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Two calls in one message, then two more in the next: the server gives all four the same id (or none)."""
    fields = ID_VARIANTS[variant]
    fake_llm.enqueue(
        Reply(tool_calls=[echo("one", **fields), echo("two", **fields)]),
        Reply(tool_calls=[echo("three", **fields), echo("four", **fields)]),
        Reply(text="done"),
    )
    proc = ram(*ECHO, "--output-format", "json", "echo four times", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"] == "done"
    assert len(fake_llm.requests) == 3  # the fake accepted every request (no 400)
    ids, results = calls_and_results(wire, fake_llm.requests[2].body)
    assert len(ids) == 4 and len(set(ids)) == 4 and all(ids)
    assert results == list(zip(ids, ["one", "two", "three", "four"], strict=True))
    assert calls_and_results(wire, fake_llm.requests[1].body)[0] == ids[:2]  # the same ids in every request
    if variant == "same":
        assert ids[0] == "call_0"  # a server's id is kept while it is unique


async def test_the_loop_answers_calls_by_position_whatever_their_ids(tmp_path: Path) -> None:
    """A future provider that lets a repeated id through still gets one distinct result per call."""
    model = ScriptedModel(
        [reply(call("Echo", "dup", message="one"), call("Echo", "dup", message="two")), reply("done")]
    )
    params = QueryParams([user_text("go")], ToolRegistry([EchoTool()]), ToolContext(cwd=tmp_path))
    events = [e async for e in query(params, QueryDeps(call_model=model))]
    (answer,) = [e.message for e in events if isinstance(e, ToolResults)]
    assert [r.content for r in answer.tool_results] == ["one", "two"]


def test_an_id_shared_with_a_result_the_model_no_longer_has_is_not_whole() -> None:
    """Read stubs ("unchanged since your last Read") rely on this: a reused id must not vouch for a dropped turn."""
    old = Message("user", (ToolResultBlock("call_0", "old read"),))
    new = Message("user", (ToolResultBlock("call_0", "new read"),))
    kept = Message("user", (ToolResultBlock("call_7", "kept"),))
    history = [old, new, kept]
    assert whole_result_ids(history, [new, kept]) == frozenset({"call_7"})


# ---- item 7: a stream that stalls is given up after RAM_STREAM_IDLE_TIMEOUT seconds and retried ----


@pytest.mark.parametrize("wire", WIRES)
def test_a_stalled_stream_is_retried_and_its_partial_text_is_not_kept(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Stall(Reply(text="Partial answer that never ends", chunk_size=4), events=5),
        Reply(tool_calls=[echo("x")]),
        Reply(text="Final answer."),
    )
    env = env_for(wire, fake_llm, RAM_STREAM_IDLE_TIMEOUT="1")
    proc = ram(*ECHO, "answer me", env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Final answer.\n"
    (retry_line,) = [line for line in proc.stderr.splitlines() if line.startswith("[retry]")]
    assert "stalled" in retry_line and "no data for 1s" in retry_line
    assert len(fake_llm.requests) == 3
    assert fake_llm.requests[1].body == fake_llm.requests[0].body  # the same request, from the start
    assert "Partial" not in json.dumps(fake_llm.requests[2].body)  # the history kept only complete answers
    ids, results = calls_and_results(wire, fake_llm.requests[2].body)
    assert results == [(ids[0], "x")]  # the retried call's tool call, answered


def test_a_bad_idle_timeout_is_one_clear_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    proc = ram("hi", env=env_for("openai", fake_llm, RAM_STREAM_IDLE_TIMEOUT="soon"), cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: RAM_STREAM_IDLE_TIMEOUT must be a number of seconds above 0, got 'soon'"
    ]
    assert fake_llm.requests == []


def test_headless_on_a_terminal_says_it_is_waiting_for_a_silent_model(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Stall(Reply(text="Partial", chunk_size=4), events=2), Reply(text="Final answer."))
    env = env_for("openai", fake_llm, RAM_STREAM_IDLE_TIMEOUT="2")
    leader, follower = pty.openpty()  # stderr on a terminal, stdout a pipe
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "react_agent_mini", "answer me"],
            env=env,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=follower,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=60,
        )
        os.close(follower)
        follower = -1
        chunks: list[bytes] = []
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO: the child's end is closed and everything was read
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        if follower != -1:
            os.close(follower)
        os.close(leader)
    err = b"".join(chunks).decode()
    assert proc.returncode == 0, err
    assert proc.stdout == "Final answer.\n"
    lines = [line.strip() for line in err.splitlines()]
    waiting = [i for i, line in enumerate(lines) if line.startswith("[waiting]")]
    retry = [i for i, line in enumerate(lines) if line.startswith("[retry]")]
    assert len(waiting) == 1 and retry and waiting[0] < retry[0], err
    assert "waiting for the model" in lines[waiting[0]]


# ---- item 18: every model call counts in the session's totals ----


async def test_compact_now_counts_its_summary_call(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(text="First answer.", usage=WireUsage(input_tokens=100, output_tokens=20)),
        Reply(text="Second answer.", usage=WireUsage(input_tokens=300, output_tokens=30)),
        Reply(text="SUMMARY: two questions so far.", usage=WireUsage(input_tokens=700, output_tokens=70)),
    )
    provider = OpenAICompatProvider("test-key", fake_llm.openai_base_url, "deepseek-chat")
    deps = production_deps(provider, RetryPolicy(max_attempts=1), allow_read_only)
    session = Session(deps=deps, tools=default_tools(), context=ToolContext(cwd=tmp_path))
    try:
        for text in ("first question", "second question"):
            [e async for e in session.run_turn(text)]
        result = await session.compact_now()
    finally:
        await provider.aclose()
    assert isinstance(result, Compacted)
    assert "tools" not in fake_llm.requests[2].body  # it was the summary call
    assert session.totals.usage == Usage(input_tokens=1100, output_tokens=120)
    assert session.totals.model_calls == 3
    assert session.totals.last_usage == Usage(input_tokens=300, output_tokens=30)  # the context, not the summary


def test_headless_json_usage_and_cost_include_autocompact_summaries(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS="10000", AUTOCOMPACT_PERCENT="50")
    long_answer = "Noted. " + "Here is a long explanation of the design. " * 280
    fake_llm.enqueue(Reply(text=long_answer, usage=WireUsage(input_tokens=3000)))
    assert ram("Rule one: never change the public API.", env=env, cwd=tmp_path).returncode == 0
    fake_llm.enqueue(
        Reply(text="SUMMARY: one rule.", usage=WireUsage(input_tokens=700, output_tokens=70)),
        Reply(text="Understood.", usage=WireUsage(input_tokens=100, output_tokens=20)),
    )
    proc = ram("-c", "--output-format", "json", "Now add a helper.", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "tools" not in fake_llm.requests[-2].body  # an automatic summary ran before the real call
    result = json.loads(proc.stdout)
    assert result["result"] == "Understood."
    assert result["usage"]["input_tokens"] == 800 and result["usage"]["output_tokens"] == 90
    assert result["total_cost_usd"] == pytest.approx(cost_usd("deepseek-chat", Usage(800, 90)))


# ---- item 18: an unknown model gets a hint, as a refused key does ----

MODEL_MISSING = {
    "openai": ("The model `no-such-model` does not exist or you do not have access to it.", "OPENAI_MODEL"),
    "anthropic": ("model: no-such-model", "ANTHROPIC_MODEL"),
}


@pytest.mark.parametrize("wire", WIRES)
def test_an_unknown_model_gets_a_hint_naming_it(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    detail, variable = MODEL_MISSING[wire]
    fake_llm.enqueue(HttpError(404, detail))
    proc = ram("--model", "no-such-model", "hi", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode != 0
    (line,) = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert f"{wire} API error 404: {detail}" in line  # the server's own words stay
    assert 'model "no-such-model" was not found' in line
    assert "--model" in line and variable in line
    assert len(fake_llm.requests) == 1  # not retried
    assert fake_llm.requests[0].body["model"] == "no-such-model"


def test_a_wrong_base_url_gets_a_hint_naming_it(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = env_for("openai", fake_llm, OPENAI_BASE_URL=fake_llm.url + "/v2")  # the fake answers 404 there
    proc = ram("hi", env=env, cwd=tmp_path)
    assert_no_traceback(proc)
    (line,) = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert "openai API error 404: Unknown request URL" in line
    base = f"{fake_llm.url}/v2"
    assert f"or {base} is not an OpenAI-compatible endpoint: requests go to {base}/chat/completions" in line
    assert "check --model or OPENAI_MODEL, and OPENAI_BASE_URL" in line
    assert proc.returncode == 2  # a setup error


def test_deepseeks_400_for_an_unknown_model_gets_the_hint_too() -> None:
    error = error_for_status(400, "Model Not Exist", provider="openai", retry_after=None, model="deepseek-chatt")
    assert isinstance(error, ModelNotFound) and not error.retryable
    assert error.message == (
        'openai API error 400: Model Not Exist (model "deepseek-chatt" was not found: choose another with --model '
        "or OPENAI_MODEL)"
    )
