"""`ram rewind N` takes code and conversation back together or says why not: when some of the code cannot be put
back, the conversation is not cut either (one line says so, exit 1), unless the user asks for the conversation
alone — which then works as the line says."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram


def user_texts(fake_llm: FakeLLMServer) -> list[object]:
    return [m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "user"]


def two_turns(fake_llm: FakeLLMServer, ws: Path, second: ToolCall) -> dict[str, str]:
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "notes.md", "content": "one\n"})]),
        Reply(text="Wrote it."),
        Reply(tool_calls=[second]),
        Reply(text="Done that."),
    )
    for index, task in enumerate(("write notes", "then this")):
        proc = ram(*(["-c"] if index else []), task, env=env, cwd=ws)
        assert proc.returncode == 0 and "denied" not in proc.stderr, proc.stderr
    return env


def test_a_file_left_as_it_is_holds_the_conversation_back_until_forced(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = two_turns(fake_llm, tmp_path, ToolCall("Write", {"file_path": "plan.md", "content": "the plan\n"}))
    (tmp_path / "plan.md").write_text("my own plan\n")  # changed since the agent did

    held = ram("rewind", "1", env=env, cwd=tmp_path)
    assert_no_traceback(held)
    assert held.returncode == 1
    assert "  left plan.md as it is: it was changed after the agent last changed it" in held.stdout
    line = (
        "conversation not rewound: the code is not all back (1 file not restored), and the conversation would no "
        "longer match it; `ram rewind 1 --conversation` rewinds the conversation alone"
    )
    assert line in held.stdout.splitlines() and "conversation back" not in held.stdout
    fake_llm.enqueue(Reply(text="Still here."))
    assert ram("-c", "where are we?", env=env, cwd=tmp_path).returncode == 0
    assert user_texts(fake_llm) == ["write notes", "then this", "where are we?"]  # not cut

    both = ram("rewind", "1", "--force", env=env, cwd=tmp_path)
    assert both.returncode == 0, both.stdout + both.stderr
    assert "  removed plan.md (it did not exist then)" in both.stdout
    assert "conversation back to right after turn 1: 2 later turn(s) dropped" in both.stdout
    assert not (tmp_path / "plan.md").exists() and (tmp_path / "notes.md").read_text() == "one\n"


def test_a_command_whose_changes_were_not_seen_holds_it_back_and_conversation_alone_works(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    """Not a git repository: what a Bash command changed cannot be undone, so the conversation waits for the user
    to say they want it alone."""
    env = two_turns(fake_llm, tmp_path, ToolCall("Bash", {"command": "echo made > made.txt"}))
    held = ram("rewind", "1", env=env, cwd=tmp_path)
    assert_no_traceback(held)
    assert held.returncode == 1
    assert "  not undone (no git snapshot): what `echo made > made.txt` changed" in held.stdout
    assert "conversation not rewound: the code is not all back (what 1 command changed not undone)" in held.stdout
    alone = ram("rewind", "1", "--conversation", env=env, cwd=tmp_path)
    assert alone.returncode == 0, alone.stdout + alone.stderr
    assert "conversation back to right after turn 1: 1 later turn(s) dropped" in alone.stdout
    fake_llm.enqueue(Reply(text="Yes."))
    assert ram("-c", "only notes?", env=env, cwd=tmp_path).returncode == 0
    assert user_texts(fake_llm) == ["write notes", "only notes?"]
    assert (tmp_path / "made.txt").exists()  # as the user was told
