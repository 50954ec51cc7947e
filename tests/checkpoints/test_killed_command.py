"""A turn killed (kill -9) while its Bash command ran, then rewound: with `ram rewind`, with `/rewind` in a REPL
continuing the session, and after a turn of a continued session — what the command changed comes back with the
conversation, never the conversation alone.

The command changes a file and then blocks; ram is killed while it blocks, before it could take the snapshot after
the command (which is what used to record the command's changes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..processes import pids_with, wait_until
from ..test_cli import assert_no_traceback, env_for, ram
from ..ui.test_repl_pty import ram_term, sent

BLOCKS = "sleep 613.25"
"""What the killed command blocks in (a duration no other test uses: its processes are found by it)."""


def git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("old\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        git(ws, *args)
    yield ws
    for pid in pids_with(BLOCKS):  # the command ram was killed during, whatever the test did
        os.kill(pid, signal.SIGKILL)


def user_texts(messages: list[dict[str, object]]) -> list[object]:
    return [m["content"] for m in messages if m["role"] == "user"]


def killed_during_a_command(fake_llm: FakeLLMServer, ws: Path, env: dict[str, str]) -> None:
    """Turn 1 sets a.txt to v1 (a Bash command that ends); turn 2's command sets it to `new` and blocks, and ram is
    killed (kill -9) while it blocks, then the command too."""
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "echo v1 > a.txt"})]),
        Reply(text="Set to v1."),
        Reply(tool_calls=[ToolCall("Bash", {"command": f"echo new > a.txt; {BLOCKS}"})]),
    )
    first = ram("set a to v1", env=env, cwd=ws)
    assert first.returncode == 0 and "denied" not in first.stderr, first.stderr
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent_mini", "-c", "set a to new"],
        env=env,
        cwd=ws,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # the command has changed the file and blocks (several times the time this takes on a loaded machine)
        assert wait_until(lambda: (ws / "a.txt").read_text() == "new\n" and pids_with(BLOCKS), timeout=120)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    for pid in pids_with(BLOCKS):
        os.kill(pid, signal.SIGKILL)
    assert wait_until(lambda: not pids_with(BLOCKS), timeout=60)
    assert (ws / "a.txt").read_text() == "new\n"


def test_ram_rewind_restores_what_a_killed_command_changed_and_the_conversation(
    fake_llm: FakeLLMServer, repo: Path
) -> None:
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    killed_during_a_command(fake_llm, repo, env)

    listed = ram("rewind", env=env, cwd=repo)
    assert_no_traceback(listed)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[1].startswith("   1. set a to v1") and lines[1].endswith("a.txt")
    assert lines[2].startswith("   2. set a to new") and lines[2].endswith("a.txt")  # the killed command's change

    rewound = ram("rewind", "1", env=env, cwd=repo)
    assert_no_traceback(rewound)
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert "  restored a.txt" in rewound.stdout
    assert "conversation back to right after turn 1: 1 later turn(s) dropped" in rewound.stdout
    assert (repo / "a.txt").read_text() == "v1\n"  # code and conversation agree: right after turn 1

    rewound = ram("rewind", "0", env=env, cwd=repo)
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert "  restored a.txt" in rewound.stdout and "conversation back to the start" in rewound.stdout
    assert (repo / "a.txt").read_text() == "old\n"

    fake_llm.enqueue(Reply(text="Starting afresh."))
    after = ram("-c", "hello again", env=env, cwd=repo)
    assert after.returncode == 0, after.stderr
    assert user_texts(fake_llm.requests[-1].body["messages"]) == ["hello again"]


def test_the_repls_rewind_on_a_continued_session_restores_them_too(fake_llm: FakeLLMServer, repo: Path) -> None:
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    killed_during_a_command(fake_llm, repo, env)
    fake_llm.enqueue(Reply(text="Back at v1."))
    with ram_term(fake_llm, repo, "-c", ALLOW_WRITE="1") as term:
        term.prompt()
        term.line("/rewind")
        listing = term.expect("Rewind to right after which turn?")
        assert " 2. set a to new" in listing and listing.count("a.txt") >= 2
        term.line("1")
        term.expect("[b/c/n, Enter to cancel]")
        term.line("b")
        done = term.expect("conversation back to right after turn 1")
        assert "restored a.txt" in done and "not rewound" not in done
        term.prompt()
        term.line("where are we?")
        term.expect("Back at v1.")
        term.send("\x04")
        assert term.wait() == 0
    assert (repo / "a.txt").read_text() == "v1\n"
    assert user_texts(sent(fake_llm)) == ["set a to v1", "where are we?"]
    assert "Traceback" not in term.text


def test_a_continued_session_settles_the_killed_command_before_its_own_changes(
    fake_llm: FakeLLMServer, repo: Path
) -> None:
    """The next turn changes the same file again: the rewind still goes back to v1, not to what the killed command
    left (which is what the next turn found)."""
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    killed_during_a_command(fake_llm, repo, env)
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "echo newer > a.txt"})]), Reply(text="Newer."))
    again = ram("-c", "make it newer", env=env, cwd=repo)
    assert again.returncode == 0, again.stderr
    rewound = ram("rewind", "1", env=env, cwd=repo)
    assert_no_traceback(rewound)
    assert rewound.returncode == 0, rewound.stdout + rewound.stderr
    assert "conversation back to right after turn 1: 2 later turn(s) dropped" in rewound.stdout
    assert (repo / "a.txt").read_text() == "v1\n"
