"""Permissions end to end: the CLI as a subprocess, a scripted model asking for changes, real files.

Headless runs cannot ask, so changes are denied unless ALLOW_WRITE=1, a flag or a rule allows them; on a
terminal the user answers y / a / N.
"""

from __future__ import annotations

import json
import os
import pty
import sys
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for, ram
from ..ui.test_repl_minimal import read_until


def write_call(path: str, content: str) -> ToolCall:
    return ToolCall("Write", {"file_path": path, "content": content})


def bash_call(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command})


def tool_results(server: FakeLLMServer) -> list[str]:
    """Contents of every tool message in the last request."""
    return [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"]


def test_headless_denies_changes_and_says_how_to_allow(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    fake_llm.enqueue(
        Reply(tool_calls=[write_call("new.txt", "x"), bash_call("git status; rm -f keep.txt"), bash_call("ls")]),
        Reply(text="I could not change anything."),
    )
    proc = ram("tidy up", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "new.txt").exists() and (tmp_path / "keep.txt").read_text() == "precious"
    write_result, bash_result, ls_result = tool_results(fake_llm)
    assert write_result.startswith("Error: ") and "ALLOW_WRITE=1" in write_result
    assert "--allowed-tools" in write_result
    assert bash_result.startswith("Error: ") and "ALLOW_WRITE=1" in bash_result
    assert "keep.txt" in ls_result and not ls_result.startswith("Error")  # read-only commands just run


def test_allow_write_lets_changes_through(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[write_call("new.txt", "hello\n")]), Reply(text="done"))
    proc = ram("write it", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "new.txt").read_text() == "hello\n"
    assert tool_results(fake_llm) == ["Created new.txt (1 line)."]


def test_a_prefix_rule_is_not_fooled_by_chaining(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    hostile = [
        "git status; rm -f keep.txt",
        "git status && rm -f keep.txt",
        "git status $(rm -f keep.txt)",
        "git status > keep.txt",
        "git status | sh -c 'rm -f keep.txt'",
    ]
    fake_llm.enqueue(Reply(tool_calls=[bash_call(c) for c in hostile]), Reply(text="ok"))
    proc = ram("--allowed-tools", "Bash(git status:*)", "go", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "keep.txt").read_text() == "precious"
    assert all(r.startswith("Error: ") for r in tool_results(fake_llm))


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
def test_settings_file_rules_and_a_broken_file_warning(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "settings.json").write_text(json.dumps({"permissions": {"allow": ["Write(notes/**)"]}}))
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text('{"permissions": {"allow": ["Write(src/**"]}}')
    fake_llm.enqueue(Reply(tool_calls=[write_call("notes/a.md", "a"), write_call("src/b.py", "b")]), Reply(text="ok"))
    proc = ram("go", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0
    assert (tmp_path / "notes" / "a.md").read_text() == "a"
    assert not (tmp_path / "src" / "b.py").exists()
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and ".claude/settings.json" in warnings[0]
    assert "Traceback" not in proc.stderr


def test_plan_mode_is_read_only_even_with_allow_write(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[write_call("x.txt", "x")]), Reply(text="ok"))
    proc = ram("--permission-mode", "plan", "go", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert proc.returncode == 0
    assert not (tmp_path / "x.txt").exists()
    assert "plan mode" in tool_results(fake_llm)[0]


def test_terminal_prompt_yes_always_and_no(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[write_call("a.txt", "1")]),  # answered y
        Reply(text="wrote a"),
        Reply(tool_calls=[bash_call("touch b.txt")]),  # answered a: Bash(touch:*) for the session
        Reply(tool_calls=[bash_call("touch c.txt")]),  # allowed by that rule without asking
        Reply(text="touched"),
        Reply(tool_calls=[write_call("d.txt", "4"), bash_call("ls")]),  # answered N: turn ends, ls skipped
    )
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(tmp_path)
        os.execve(sys.executable, [sys.executable, "-m", "react_agent_mini"], env_for("openai", fake_llm))
    read_until(fd, "> ")
    os.write(fd, b"first\n")
    assert "Write a.txt" in read_until(fd, "Allow? [y/a/N]")
    os.write(fd, b"y")  # one key answers
    read_until(fd, "wrote a")
    os.write(fd, b"second\n")
    prompt = read_until(fd, "Allow? [y/a/N]")
    assert "touch b.txt" in prompt and "Bash(touch:*)" in prompt
    os.write(fd, b"a")  # one key answers
    after = read_until(fd, "touched")
    assert "needs permission" not in after  # c.txt needed no prompt
    os.write(fd, b"third\n")
    read_until(fd, "Allow? [y/a/N]")
    os.write(fd, b"n")  # one key answers
    read_until(fd, "interrupted")
    os.write(fd, b"\x04")
    os.waitpid(pid, 0)
    assert (tmp_path / "a.txt").read_text() == "1"
    assert (tmp_path / "b.txt").exists() and (tmp_path / "c.txt").exists()
    assert not (tmp_path / "d.txt").exists()
    last = fake_llm.requests[-1].body["messages"]
    assert last[-1]["role"] == "user" and last[-1]["content"] == "third"


def test_search_tools_do_not_reveal_files_reading_is_denied_for(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("token=hunter2\n")
    (tmp_path / "app.py").write_text("token = read_key()\n")
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("Grep", {"pattern": "token", "output_mode": "content"}),
                ToolCall("Glob", {"pattern": "**/*"}),
                ToolCall("Read", {"file_path": "secrets/key.txt"}),
                ToolCall("Read", {"file_path": "app/../secrets/key.txt"}),
            ]
        ),
        Reply(text="ok"),
    )
    proc = ram("--disallowed-tools", "Read(./secrets/**)", "look", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    grep, glob, read, sneaky = tool_results(fake_llm)
    assert grep == "app.py:1:token = read_key()"
    assert glob == "app.py"
    assert read.startswith("Error: ") and "hunter2" not in read
    assert sneaky.startswith("Error: ") and "hunter2" not in sneaky


def test_json_output_lists_permission_denials_and_the_init_says_the_mode(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[write_call("new.txt", "x"), bash_call("ls")]),
        Reply(text="I could not write it."),
    )
    proc = ram("--output-format", "stream-json", "write it", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    init, result = events[0], events[-1]
    assert init["subtype"] == "init" and init["permissionMode"] == "default" and init["mcp_servers"] == []
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Write"]  # ls ran: not a denial
    assert result["permission_denials"][0]["tool_input"] == {"file_path": "new.txt", "content": "x"}
    assert result["total_cost_usd"] is not None and result["total_cost_usd"] >= 0  # deepseek-chat has a list price
