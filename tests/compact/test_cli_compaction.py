"""Compaction end to end, through the CLI and the fake server: the outbound requests shrink as the seed specifies
while the session history (the transcript) keeps everything; an LLM summary rewrites the history and keeps every
user message verbatim."""

from __future__ import annotations

import json
from pathlib import Path

from react_agent_mini import transcript

from ..fakes.fake_llm import FakeLLMServer, HttpError, Reply, ToolCall
from ..fakes.fake_llm import Usage as WireUsage
from ..test_cli import env_for, ram

PLACEHOLDER = "[Old tool result content cleared] tool=Read "


def big_files(root: Path, count: int, chars: int) -> list[str]:
    names = []
    for i in range(count):
        name = f"mod{i}.py"
        line = f"value_{i} = '{'x' * 60}'\n"
        (root / name).write_text(line * (chars // len(line)))
        names.append(name)
    return names


def reads_then_answer(server: FakeLLMServer, names: list[str]) -> None:
    for name in names:
        server.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": name})]))
    server.enqueue(Reply(text="All read."))


def test_micro_clears_old_reads_and_retain_is_not_needed(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    names = big_files(tmp_path, 6, 3900)  # under ①'s 4000-char cap, so only ② can shrink them
    reads_then_answer(fake_llm, names)
    env = env_for("openai", fake_llm, TRACE="1", COMPACT_THRESHOLD_CHARS="20000", COMPACT_PROFILE="seed")
    proc = ram("read every module", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    traces = [line for line in proc.stderr.splitlines() if line.startswith("[trace] compact")]
    assert any(line.startswith("[trace] compact.micro replaced=") for line in traces)
    assert any("stage=micro" in line and "strategy=micro" in line for line in traces)
    assert not any("stage=retain" in line for line in traces)
    last = fake_llm.requests[-1].body["messages"]
    tool_contents = [m["content"] for m in last if m["role"] == "tool"]
    cleared = [c for c in tool_contents if c.startswith(PLACEHOLDER)]
    assert cleared and cleared[0] == PLACEHOLDER + "mod0.py"
    assert all(not c.startswith(PLACEHOLDER) for c in tool_contents[-4:])  # the newest 4 stay whole
    # the session history still holds every byte
    (saved,) = transcript.list_sessions(tmp_path)
    history = transcript.load(saved.path).messages
    results = [r.content for m in history for r in m.tool_results]
    assert len(results) == 6 and not any(PLACEHOLDER in r for r in results)


def test_compact_0_turns_everything_off(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    names = big_files(tmp_path, 6, 3900)
    reads_then_answer(fake_llm, names)
    env = env_for("openai", fake_llm, TRACE="1", COMPACT_THRESHOLD_CHARS="20000", COMPACT="0")
    proc = ram("read every module", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "[trace] compact" not in proc.stderr
    last = fake_llm.requests[-1].body["messages"]
    assert not any(m["role"] == "tool" and m["content"].startswith(PLACEHOLDER) for m in last)


def test_a_summary_rewrites_the_history_and_keeps_every_user_message(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = env_for("openai", fake_llm, CONTEXT_WINDOW_TOKENS="10000", AUTOCOMPACT_PERCENT="50")
    long_answer = "Noted: the API is frozen. " + "Here is a long explanation of the design. " * 280
    fake_llm.enqueue(Reply(text=long_answer, usage=WireUsage(input_tokens=3000)))
    assert ram("Rule one: never change the public API.", env=env, cwd=tmp_path).returncode == 0
    # the next turn starts over the trigger: one side call summarises, then the real call goes out
    fake_llm.enqueue(Reply(text="SUMMARY: the user set a rule about the public API."), Reply(text="Understood."))
    proc = ram("-c", "--output-format", "stream-json", "Now add a helper.", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    side, main = fake_llm.requests[-2].body, fake_llm.requests[-1].body
    assert "tools" not in side  # the summary call offers no tools
    texts = [m.get("content") or "" for m in main["messages"] if m["role"] == "user"]
    assert any("SUMMARY: the user set a rule" in t for t in texts)
    assert "Rule one: never change the public API." in texts  # verbatim, not only summarised
    assert texts[-1] == "Now add a helper."
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    boundary = [e for e in events if e.get("subtype") == "compact_boundary"]
    assert len(boundary) == 1 and "Compacted the conversation" in boundary[0]["notice"]
    # the transcript records the boundary: a resumed session starts from the rewritten history
    (saved,) = transcript.list_sessions(tmp_path)
    history = transcript.load(saved.path).messages
    assert any("SUMMARY: the user set a rule" in m.text for m in history)
    assert history[-1].text == "Understood."


def test_a_context_length_refusal_is_answered_by_a_summary_and_one_retry(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Our window table said 128k, the server's model has 16k: the refusal is the first we hear of it."""
    env = env_for("anthropic", fake_llm)
    fake_llm.enqueue(Reply(text="Noted: keep the API frozen."))
    assert ram("Rule one: never change the public API.", env=env, cwd=tmp_path).returncode == 0
    refusal = "prompt is too long: 17000 tokens > 16000 maximum"
    fake_llm.enqueue(HttpError(400, refusal), Reply(text="SUMMARY: one rule so far."), Reply(text="Helper added."))
    proc = ram("-c", "--output-format", "stream-json", "Now add a helper.", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    boundary = [e for e in events if e.get("subtype") == "compact_boundary"]
    assert len(boundary) == 1 and boundary[0]["notice"].startswith("The model refused the request as too long.")
    assert events[-1]["result"] == "Helper added."
    retry = fake_llm.requests[-1].body["messages"]
    texts = [b.get("text", "") for m in retry if m["role"] == "user" for b in m["content"] if b["type"] == "text"]
    assert any("SUMMARY: one rule so far." in t for t in texts)
    assert "Rule one: never change the public API." in texts and texts[-1] == "Now add a helper."


def test_a_refusal_within_one_long_headless_turn_clears_old_tool_results_and_retries(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    for i in range(10):
        (tmp_path / f"part{i}.txt").write_text(f"part {i}\n" + "lorem ipsum dolor sit amet\n" * 120)
    refusal = "This model's maximum context length is 4000 tokens. However, you requested 9800 tokens."
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": f"part{i}.txt"}) for i in range(10)]),
        HttpError(400, refusal),
        Reply(text="All ten parts read."),
    )
    proc = ram("read every part", env=env_for("openai", fake_llm, COMPACT_PROFILE="seed"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("All ten parts read.")
    assert "window is 4,000 tokens" in proc.stderr and "Traceback" not in proc.stderr
    retry = fake_llm.requests[-1].body["messages"]
    results = [m["content"] for m in retry if m["role"] == "tool"]
    assert len(results) == 10  # every call still answered
    assert sum(r.startswith("[Old tool result content cleared] tool=Read part") for r in results) == 6
    assert fake_llm.requests[-2].body["messages"] != retry  # the refused request was bigger


def test_after_a_refusal_v2_fits_the_stated_window(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """The default profile learns from the refusal too: its threshold (and so its cap on a fresh result) falls
    to half the window the refusal stated, and the retry fits."""
    for i in range(10):
        (tmp_path / f"part{i}.txt").write_text(f"part {i}\n" + "lorem ipsum dolor sit amet\n" * 120)
    refusal = "This model's maximum context length is 4000 tokens. However, you requested 9800 tokens."
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": f"part{i}.txt"}) for i in range(10)]),
        HttpError(400, refusal),
        Reply(text="All ten parts read."),
    )
    proc = ram("read every part", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("All ten parts read.")
    retry = fake_llm.requests[-1].body["messages"]
    results = [m["content"] for m in retry if m["role"] == "tool"]
    assert len(results) == 10  # every call still answered
    from react_agent_mini.compact.tokens import estimate_tokens

    assert (
        sum(estimate_tokens(r) for r in results)
        <= 2000
        < sum(
            estimate_tokens(r)
            for r in [m["content"] for m in fake_llm.requests[-2].body["messages"] if m["role"] == "tool"]
        )
    )


def test_a_resumed_session_is_measured_as_it_is_sent(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """Right after `-c` there is no provider report yet, so the meter estimates: it must estimate what stage ①
    sends. Counting each long result whole made five `seq` outputs read as ~80% of a 128k window, and every
    `ram -c` summarised for nothing."""
    env = env_for("openai", fake_llm)
    for run in range(5):  # five different commands (the same one thrice would be stopped as a repeat)
        fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": f"seq {run + 1} {run + 20000}"})]))
    fake_llm.enqueue(Reply(text="Counted."))
    assert ram("count to 20000 five times", env=env, cwd=tmp_path).returncode == 0
    (saved,) = transcript.list_sessions(tmp_path)
    stored = sum(len(r.content) for m in transcript.load(saved.path).messages for r in m.tool_results)
    assert stored > 100_000  # the history keeps what Bash returned (its head and tail, 30 KB each)
    before = len(fake_llm.requests)
    fake_llm.enqueue(Reply(text="Still here."))
    proc = ram("-c", "anything else?", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Compacted" not in proc.stderr
    assert len(fake_llm.requests) == before + 1  # the answer only: no summary call went out
