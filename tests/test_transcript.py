"""Transcripts: every message on disk as it is produced; resuming gives back a valid history."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from react_agent_mini import transcript
from react_agent_mini.messages import Message, ToolResultBlock, ToolUseBlock, assistant_text, user_text

from .fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from .test_cli import env_for, ram


def test_append_load_and_compact_records(tmp_path: Path) -> None:
    t = transcript.Transcript.create(tmp_path, "s1", {"cwd": "/x", "model": "m"})
    t.append(user_text("hello"))
    t.append(assistant_text("hi"))
    t.compacted([user_text("summary", meta=True), user_text("hello")])
    t.append(user_text("after"))
    t.close()
    loaded = transcript.load(tmp_path / "s1.jsonl")
    assert loaded.session_id == "s1" and loaded.meta["model"] == "m"
    assert [m.text for m in loaded.messages] == ["summary", "hello", "after"]
    assert loaded.repaired == [] and loaded.skipped_lines == 0


def test_a_crash_mid_line_and_a_dangling_tool_call_are_repaired(tmp_path: Path) -> None:
    t = transcript.Transcript.create(tmp_path, "s2", {})
    t.append(user_text("run it"))
    t.append(Message("assistant", (ToolUseBlock("t1", "Bash", {"command": "make"}), ToolUseBlock("t2", "Echo", {}))))
    t.close()
    with (tmp_path / "s2.jsonl").open("a") as handle:
        handle.write('{"type": "message", "message": {"role": "user", "con')  # the process died here
    loaded = transcript.load(tmp_path / "s2.jsonl")
    assert loaded.skipped_lines == 1
    assert loaded.repaired == [
        Message(
            "user",
            (
                ToolResultBlock("t1", transcript.INTERRUPTED_RESULT, is_error=True),
                ToolResultBlock("t2", transcript.INTERRUPTED_RESULT, is_error=True),
            ),
            meta=True,
        )
    ]
    assert loaded.messages[-1] == loaded.repaired[0]


def test_sessions_are_grouped_by_directory_and_listed_newest_first(tmp_path: Path) -> None:
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    a, b = tmp_path / "a", tmp_path / "b"
    for cwd, sid, text in [(a, "old", "first task"), (a, "new", "second task"), (b, "other", "elsewhere")]:
        t = transcript.Transcript.create(transcript.sessions_dir(cwd, env), sid, {})
        t.append(user_text(text))
        t.close()
        time.sleep(0.01)
    listed = transcript.list_sessions(a, env)
    assert [(i.session_id, i.preview, i.messages) for i in listed] == [
        ("new", "second task", 1),
        ("old", "first task", 1),
    ]
    assert transcript.find_session(a, "ne", env) == listed[0].path
    assert transcript.find_session(a, "zzz", env) is None


def test_headless_runs_are_sessions_and_continue_picks_up(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Nice to meet you, Ada."), Reply(text="You are Ada."))
    first = ram("--output-format", "json", "My name is Ada.", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout)["session_id"]
    second = ram("-c", "--output-format", "json", "What is my name?", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["session_id"] == session_id
    sent = [m.get("content") for m in fake_llm.requests[1].body["messages"] if m["role"] != "system"]
    assert sent == ["My name is Ada.", "Nice to meet you, Ada.", "What is my name?"]
    listing = ram("--resume", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert listing.returncode == 0
    assert session_id[:12] in listing.stdout and "My name is Ada." in listing.stdout


def test_kill_9_mid_turn_then_continue_sends_a_valid_request(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Running the slow step.", tool_calls=[ToolCall("Bash", {"command": "sleep 3.217"})]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent_mini", "do the slow thing"],
        env=env_for("openai", fake_llm, ALLOW_WRITE="1"),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    fake_llm.wait_for_requests(1)
    directory = transcript.sessions_dir(tmp_path)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # wait until the assistant's tool call is on disk
        files = list(directory.glob("*.jsonl")) if directory.is_dir() else []
        if files and "tool_use" in files[0].read_text():
            break
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    fake_llm.enqueue(Reply(text="Picking up again."))
    again = ram("-c", "carry on", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # the fake server answers 400 to an unanswered tool call
    messages = fake_llm.requests[-1].body["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[3]["content"].startswith("Error: Interrupted")
    assert messages[2]["content"] == "Running the slow step."
    assert messages[-1]["content"] == "carry on"
