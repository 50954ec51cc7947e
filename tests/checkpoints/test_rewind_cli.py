"""`ram rewind` as a user runs it: sessions made by real `ram` runs against the loopback fake LLM, in a plain
folder and in a git repository (where Bash-made changes are rewound too).

Done when: a bad edit from two turns ago is undone with one rewind, and the next request no longer has those
turns."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from react_agent_mini import session_lock, transcript

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram

GOOD = "def add(a, b):\n    return a + b\n"


def edit(old: str, new: str, path: str = "calc.py") -> ToolCall:
    return ToolCall("Edit", {"file_path": path, "old_string": old, "new_string": new})


def read(path: str = "calc.py") -> ToolCall:
    return ToolCall("Read", {"file_path": path})


def user_texts(fake_llm: FakeLLMServer) -> list[str]:
    return [m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "user"]


def three_sessions_turns(fake_llm: FakeLLMServer, cwd: Path, env: dict[str, str], *, bash_turn: bool) -> None:
    """Turn 1 fixes calc.py; turn 2 is the bad edit; turn 3 adds a file (with Bash in a repository)."""
    fake_llm.enqueue(
        Reply(tool_calls=[read()]),
        Reply(tool_calls=[edit("a - b", "a + b")]),
        Reply(text="Fixed add."),
        Reply(tool_calls=[read()]),
        Reply(tool_calls=[edit("return a + b", "return a + b + 1  # faster"),
                          ToolCall("Write", {"file_path": "perf.md", "content": "faster!\n"})]),
        Reply(text="Made it faster."),
        Reply(tool_calls=[ToolCall("Bash", {"command": "echo '# tests' > test_calc.py && rm notes.txt"})] if bash_turn
              else [ToolCall("Write", {"file_path": "test_calc.py", "content": "# tests\n"})]),
        Reply(text="Added tests."),
    )  # fmt: skip
    for index, task in enumerate(("fix add", "make it faster", "add tests")):
        proc = ram(*(["-c"] if index else []), task, env=env, cwd=cwd)
        assert_no_traceback(proc)
        assert proc.returncode == 0 and "denied" not in proc.stderr, proc.stderr


@pytest.fixture(params=["plain", "git"])
def workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "notes.txt").write_text("keep me\n")
    if request.param == "git":
        env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
               "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
            subprocess.run(["git", *args], cwd=ws, env=env, check=True, capture_output=True)
    return ws


def test_a_bad_edit_from_two_turns_ago_is_undone_with_one_rewind(fake_llm: FakeLLMServer, workspace: Path) -> None:
    in_git = (workspace / ".git").exists()
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    three_sessions_turns(fake_llm, workspace, env, bash_turn=in_git)
    assert (workspace / "calc.py").read_text() == "def add(a, b):\n    return a + b + 1  # faster\n"
    listed = ram("rewind", env=env, cwd=workspace)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("session ") and "3 turn(s)" in lines[0]
    assert lines[1].startswith("   1. fix add") and lines[1].endswith("calc.py")
    assert lines[2].startswith("   2. make it faster") and lines[2].endswith("calc.py, perf.md")
    third = "notes.txt, test_calc.py" if in_git else "test_calc.py"
    assert lines[3].startswith("   3. add tests") and lines[3].endswith(third)

    rewound = ram("rewind", "1", env=env, cwd=workspace)
    assert_no_traceback(rewound)
    assert rewound.returncode == 0, rewound.stderr
    assert "  restored calc.py" in rewound.stdout and "  removed perf.md (it did not exist then)" in rewound.stdout
    assert "conversation back to right after turn 1: 2 later turn(s) dropped" in rewound.stdout
    assert (workspace / "calc.py").read_text() == GOOD
    assert not (workspace / "perf.md").exists() and not (workspace / "test_calc.py").exists()
    assert (workspace / "notes.txt").read_text() == "keep me\n"  # removed by Bash in turn 3, back again

    fake_llm.enqueue(Reply(text="We fixed add; nothing else."))
    after = ram("-c", "what did we do?", env=env, cwd=workspace)
    assert after.returncode == 0, after.stderr
    assert user_texts(fake_llm) == ["fix add", "what did we do?"]  # the later turns are gone from the request
    assert [m["role"] for m in fake_llm.requests[-1].body["messages"]] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "assistant", "user"
    ]  # fmt: skip


def test_a_file_the_user_changed_is_left_unless_forced(fake_llm: FakeLLMServer, workspace: Path) -> None:
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    three_sessions_turns(fake_llm, workspace, env, bash_turn=False)
    (workspace / "calc.py").write_text("# my own change\n")
    kept = ram("rewind", "1", "--code", env=env, cwd=workspace)
    assert kept.returncode == 1
    assert "  left calc.py as it is: it was changed after the agent last changed it" in kept.stdout
    assert "rerun with --force" in kept.stderr and "conversation back" not in kept.stdout
    assert (workspace / "calc.py").read_text() == "# my own change\n" and not (workspace / "perf.md").exists()
    forced = ram("rewind", "1", "--code", "--force", env=env, cwd=workspace)
    assert forced.returncode == 0 and "  restored calc.py" in forced.stdout
    assert (workspace / "calc.py").read_text() == GOOD


def test_the_conversation_alone_and_the_session_lock(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "notes.txt").write_text("keep me\n")
    three_sessions_turns(fake_llm, tmp_path, env, bash_turn=False)
    path = transcript.list_sessions(tmp_path)[0].path
    lock = session_lock.SessionLock.acquire(path)
    try:
        busy = ram("rewind", "1", env=env, cwd=tmp_path)
    finally:
        lock.release()
    assert busy.returncode == 2 and "is in use by process" in busy.stderr
    assert (tmp_path / "perf.md").exists()
    only = ram("rewind", "2", "--conversation", env=env, cwd=tmp_path)
    assert only.returncode == 0 and "1 later turn(s) dropped" in only.stdout and "code back" not in only.stdout
    assert (tmp_path / "test_calc.py").exists()  # the code stays as turn 3 left it
    assert [m.text for m in transcript.load(path).messages if m.is_user_text and not m.meta] == [
        "fix add", "make it faster"
    ]  # fmt: skip
    assert ram("rewind", "9", env=env, cwd=tmp_path).returncode == 2
    assert "no saved session" in ram("rewind", env=env, cwd=tmp_path / "..").stderr


def test_rewind_0_goes_back_to_the_start(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """A bad edit made in the session's first turn is undone too: turn 0 is the start."""
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "notes.txt").write_text("keep me\n")
    three_sessions_turns(fake_llm, tmp_path, env, bash_turn=False)
    rewound = ram("rewind", "0", env=env, cwd=tmp_path)
    assert_no_traceback(rewound)
    assert rewound.returncode == 0, rewound.stderr
    assert rewound.stdout.splitlines()[0] == "code back to the start of the session (before turn 1):"
    assert "conversation back to the start of the session (before turn 1): 3 later turn(s) dropped" in rewound.stdout
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calc.py", "notes.txt"]
    fake_llm.enqueue(Reply(text="A fresh start."))
    after = ram("-c", "what did we do?", env=env, cwd=tmp_path)
    assert after.returncode == 0, after.stderr
    assert user_texts(fake_llm) == ["what did we do?"]
    assert "ram rewind 0" in ram("rewind", "--help", env=env, cwd=tmp_path).stdout
