"""Context economy v2 tried as a user would: `ram` in a subprocess against the loopback fake server, real files
and real commands. A 30 KB file reaches the model in one Read; a 300 KB command output shows a long head and a
long tail; a 60-turn session keeps the user's first instruction word for word; `COMPACT_PROFILE=seed` sends
exactly what the seed's pipeline sends."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini import transcript
from react_agent_mini.compact.budget import TRUNCATION_NOTE
from react_agent_mini.compact.economy import DROPPED_NOTE_TEXT
from react_agent_mini.compact.pipeline import CompactOptions, compact_messages
from react_agent_mini.messages import Message
from react_agent_mini.providers.anthropic import AnthropicProvider
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.providers.dialects import DIALECTS
from react_agent_mini.providers.openai_compat import to_openai_messages

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import WIRES, assert_no_traceback, env_for, ram
from .test_compact_head_tail import middle_of, split, the_head

BASH_MARKER = re.compile(r"\n\[\.\.\. (\d+) characters \((\d+) lines\) omitted \.\.\.\]\n")
FIRST = "Ground rule for the whole session: every log message stays in English, and never print an API key."


def tool_result_of(request: dict[str, Any], wire: str) -> str:
    """The content of the last tool result in a recorded request body."""
    messages = request["messages"]
    if wire == "openai":
        return str([m for m in messages if m["role"] == "tool"][-1]["content"])
    blocks = [b for m in messages for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    content = blocks[-1]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def user_texts(request: dict[str, Any], wire: str) -> list[str]:
    out = []
    for m in request["messages"]:
        if m["role"] != "user":
            continue
        if isinstance(m["content"], str):
            out.append(m["content"])
        else:
            out += [b["text"] for b in m["content"] if b.get("type") == "text"]
    return out


@pytest.mark.parametrize("wire", WIRES)
def test_a_30_kb_file_reaches_the_model_in_one_read(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    lines = [f"def handler_{n}(request):  return dispatch(request, {n})" for n in range(600)]
    (tmp_path / "app.py").write_text("\n".join(lines) + "\n")
    assert (tmp_path / "app.py").stat().st_size > 30_000
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "app.py"})]), Reply(text="It dispatches."))
    proc = ram("what does app.py do?", env=env_for(wire, fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert len(fake_llm.requests) == 2  # one Read, then the answer: no paging
    content = tool_result_of(fake_llm.requests[1].body, wire)
    assert content == "\n".join(f"{n}\t{line}" for n, line in enumerate(lines, 1))  # every line, whole
    assert TRUNCATION_NOTE not in content


@pytest.mark.parametrize("wire", WIRES)
def test_a_300_kb_command_output_shows_its_head_and_its_tail(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "seq 1 60000"})]), Reply(text="It counts."))
    proc = ram("count to 60000", env=env_for(wire, fake_llm), cwd=tmp_path)  # seq is read-only: no permission
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    output = "\n".join(str(n) for n in range(1, 60_001))
    assert len(output) > 300_000
    content = tool_result_of(fake_llm.requests[1].body, wire)
    own = BASH_MARKER.search(content)  # Bash keeps 15,000 characters at each end; at a 200k window v2 sends it whole
    lines: int | None
    if own is not None:
        head, chars, lines, tail = content[: own.start()], int(own.group(1)), int(own.group(2)), content[own.end() :]
    else:  # at 128k v2 cuts Bash's output again, head and tail, and folds Bash's count into its own
        head, chars, lines, tail = split(content)
        head = the_head(head, output)
    assert output.startswith(head) and output.endswith(tail)
    assert head.startswith("1\n2\n3\n") and tail.endswith("\n59999\n60000")
    assert len(head) > 8_000 and len(tail) > 8_000  # a long head and a long tail (the seed: 4,000 in all)
    middle = middle_of(output, head, tail)
    assert (chars, lines) == (len(middle), middle.count("\n"))  # it says exactly what the model does not see


def test_a_60_turn_session_keeps_the_first_instruction_word_for_word(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS="32000")  # a small model: compaction sets in soon
    for i in range(60):
        (tmp_path / f"part{i}.py").write_text("".join(f"value_{i}_{n} = compute({n}, {i})\n" for n in range(300)))
    said = [FIRST, *(f"Turn {i}: now read part{i}.py and tell me what it computes." for i in range(1, 60))]
    for i, text in enumerate(said):
        fake_llm.enqueue(
            Reply(tool_calls=[ToolCall("Read", {"file_path": f"part{i}.py"})]),
            Reply(text=f"part{i}.py computes values for case {i}. " + "It calls compute for each line. " * 40),
        )
        proc = ram(*(["-c"] if i else []), text, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    last = fake_llm.requests[-1].body
    texts = user_texts(last, "openai")
    assert DROPPED_NOTE_TEXT in texts  # old turns were dropped to fit...
    assert [t for t in texts if t in said] == said  # ...and every message the user wrote is there, in order
    assert texts.index(FIRST) < texts.index(said[-1])
    (saved,) = transcript.list_sessions(tmp_path)
    assert [m.text for m in transcript.load(saved.path).messages if m.is_user_text] == said  # history untouched


def seed_requests(history: list[Message], system: str, wire: str, threshold: int) -> list[list[dict[str, Any]]]:
    """The message lists the seed's pipeline sends for each model call of `history` (one per assistant
    message, seeing everything before it)."""
    options = CompactOptions.v4(threshold_chars=threshold)
    out = []
    for i, message in enumerate(history):
        if message.role != "assistant":
            continue
        outbound = compact_messages(tuple(history[:i]), options)
        if wire == "openai":  # the fake answers as DeepSeek does, so ram speaks DeepSeek's dialect from then on
            out.append(to_openai_messages(system, outbound, DIALECTS["deepseek"])[1:])
        else:
            provider = AnthropicProvider(api_key="k", base_url="http://x", model="m")
            out.append(provider.build_body(ModelRequest(system, outbound, ()))["messages"])
    return out


@pytest.mark.parametrize("wire", WIRES)
def test_compact_profile_seed_reproduces_the_seed_exactly(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    for i in range(6):
        (tmp_path / f"mod{i}.py").write_text(f"value_{i} = '{'x' * 60}'\n" * 150)  # 11 KB: over ①'s 4000
    fake_llm.enqueue(*(Reply(tool_calls=[ToolCall("Read", {"file_path": f"mod{i}.py"})]) for i in range(6)))
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "seq 1 30000"})]), Reply(text="All read."))
    env = env_for(wire, fake_llm, COMPACT_PROFILE="seed", TRACE="1", COMPACT_THRESHOLD_CHARS="20000")
    proc = ram("read every module", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    (saved,) = transcript.list_sessions(tmp_path)
    history = list(transcript.load(saved.path).messages)
    bodies = [r.body for r in fake_llm.requests]
    system = bodies[0]["messages"][0]["content"] if wire == "openai" else bodies[0]["system"][0]["text"]
    sent = [b["messages"][1:] if wire == "openai" else b["messages"] for b in bodies]
    expected = seed_requests(history, system, wire, 20_000)
    for k, (got, want) in enumerate(zip(sent, expected, strict=True)):
        assert json.dumps(got) == json.dumps(want), k  # byte for byte
    if wire == "anthropic":  # the seed's three breakpoints: tools, system, the newest block
        assert all(json.dumps(b).count('"cache_control"') == 3 for b in bodies)
    traces = [line for line in proc.stderr.splitlines() if line.startswith("[trace] compact")]
    assert any(
        re.fullmatch(r"\[trace\] compact\.run stage=budget before=\d+ after=\d+ truncatedBlocks=1 strategy=truncate", t)
        for t in traces
    )
    assert any(re.fullmatch(r"\[trace\] compact\.micro replaced=\d+", t) for t in traces)
    assert any(
        re.fullmatch(
            r"\[trace\] compact\.run stage=micro before=\d+ after=\d+ estimated=\d+ overThreshold=true strategy=micro",
            t,
        )
        for t in traces
    )
    placeholder = "[Old tool result content cleared] tool=Read mod0.py"
    assert placeholder in json.dumps(sent[-1], ensure_ascii=False)
