"""The call records `ram usage` and `ram view` read, as a real session writes them: one per model call, after the
answer it produced, with the provider's counts and the request measured by part — checked against the requests
the fake server actually received, with the project's own estimator (compact/tokens.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from react_agent_mini.compact.estimate import json_chars
from react_agent_mini.compact.tokens import MESSAGE_OVERHEAD_TOKENS, TOOL_BLOCK_OVERHEAD_TOKENS, estimate_tokens

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall, Usage
from .sessions import Script, run, transcripts


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_each_call_is_recorded_after_its_answer_measured_as_it_was_sent(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "AGENTS.md").write_text("Always run the tests with `make test`.\n")
    (tmp_path / "notes.txt").write_text("".join(f"note {i}: keep it short\n" for i in range(40)))
    replies = [
        Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})], usage=Usage(1500, 40, 300)),
        Reply(tool_calls=[ToolCall("Echo", {"message": "half way"})], usage=Usage(1700, 30, 1400)),
        Reply(text="Read and echoed.", usage=Usage(1800, 20, 1600)),
    ]
    run(fake_llm, Script(), tmp_path, "read the notes", replies, OPENAI_MODEL="gpt-4.1-mini")
    (saved,) = transcripts(Path(os.environ["XDG_DATA_HOME"]))
    lines = records(saved)
    kinds = [r["type"] if r["type"] != "message" else r["message"]["role"] for r in lines]
    assert kinds == ["meta", "user", "assistant", "call", "user", "assistant", "call", "user", "assistant", "call"]
    calls = [r for r in lines if r["type"] == "call"]
    answers = [r["message"]["id"] for r in lines if r["type"] == "message" and r["message"]["role"] == "assistant"]
    assert [c["message"] for c in calls] == answers
    assert [c["kind"] for c in calls] == ["turn"] * 3 and {c["model"] for c in calls} == {"gpt-4.1-mini"}
    assert [c["stop"] for c in calls] == ["tool_use", "tool_use", "end_turn"]
    assert [c["usage"] for c in calls] == [
        {
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cache_read_input_tokens": u.cache_read_tokens,
            "cache_creation_input_tokens": 0,
        }
        for u in (r.usage for r in replies)
    ]

    for call, request in zip(calls, fake_llm.requests, strict=True):
        body = request.body
        system, *sent = body["messages"]
        context = call["context"]
        prompt = system["content"]
        assert "make test" in prompt and context["project"] > 0  # AGENTS.md, measured apart
        parts = context["system"] + context["project"] + context["memory"] + context["skills"]
        assert abs(parts - estimate_tokens(prompt)) <= 4  # sections measured one by one: rounding apart
        schemas = sum(
            TOOL_BLOCK_OVERHEAD_TOKENS
            + estimate_tokens(f["function"]["name"])
            + estimate_tokens(f["function"]["description"])
            + json_chars(f["function"]["parameters"]) // 3
            for f in body["tools"]
        )
        assert context["tools"] == schemas
        assert context["user"] == MESSAGE_OVERHEAD_TOKENS + estimate_tokens("read the notes")
        results = {
            name: MESSAGE_OVERHEAD_TOKENS + TOOL_BLOCK_OVERHEAD_TOKENS + estimate_tokens(m["content"])
            for m, name in zip([m for m in sent if m["role"] == "tool"], ["Read", "Echo"], strict=False)
        }
        assert context["results"] == results
        assert call["sent"] == {"messages": len(sent), "cleared": 0, "cut": 0, "notes": 0}
