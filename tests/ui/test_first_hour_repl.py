"""The first hour in the REPL, on a real pseudo-terminal with the loopback fake model.

- A permission prompt takes one key (`y`, `a`, `n`; Enter and Esc mean no; other keys do nothing), and keys typed
  before it appeared never answer it; without a terminal on stdout the REPL still reads a line (item 14).
- `@path` in a message attaches the file, and Tab completes `@path` in a custom command's arguments (item 17).
- An unknown key in `permissions` makes the REPL ask for every call (item 6).
- `ram --resume` lists the number of messages the resumed session then says it holds (item 21b).
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for, ram
from .test_repl_minimal import Term


def sent(fake_llm: FakeLLMServer, index: int = -1) -> list[dict[str, Any]]:
    return [m for m in fake_llm.requests[index].body["messages"] if m["role"] != "system"]


def write(name: str) -> Reply:
    return Reply(tool_calls=[ToolCall("Write", {"file_path": name, "content": "x\n"})])


# ---- item 14: one key ----


def test_one_key_answers_enter_and_esc_mean_no_and_other_keys_do_nothing(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        write("a.txt"), Reply(text="wrote a"), write("b.txt"), write("c.txt"), write("d.txt"), Reply(text="bye")
    )
    with Term(env=env_for("openai", fake_llm), cwd=tmp_path) as term:
        term.prompt()
        term.line("write a")
        term.expect("Allow? [y/a/N]")
        term.send("x")  # not an answer: nothing happens
        term.send("y")  # answers at once, no Enter
        term.expect("wrote a")
        assert "Allow? [y/a/N] y" in term.screen()  # the key taken stays on screen
        term.prompt()
        term.line("write b")
        term.expect("Allow? [y/a/N]")
        term.send("\r")  # Enter: the default, no
        term.expect("declined")
        term.prompt()
        term.line("write c")
        term.expect("Allow? [y/a/N]")
        term.send("\x1b")  # Esc: no
        term.expect("declined")
        term.prompt()
        term.line("write d")
        term.expect("Allow? [y/a/N]")
        term.send("\x03")  # Ctrl+C: the turn stops, the conversation goes on
        term.expect("Interrupted")
        term.prompt()
        term.line("thanks")
        term.expect("bye")
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "a.txt").exists()
    assert not any((tmp_path / name).exists() for name in ("b.txt", "c.txt", "d.txt"))
    assert sent(fake_llm)[-1] == {"role": "user", "content": "thanks"}  # no stray key became a message


def test_keys_typed_before_a_prompt_appears_never_answer_it(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "wait.sh").write_text("while [ ! -e go ]; do sleep 0.05; done\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "sh wait.sh"})]),  # allowed: runs until the test says go
        write("d.txt"),
        Reply(text="as you wish"),
    )
    env = env_for("openai", fake_llm)
    with Term("--allowed-tools", "Bash(sh wait.sh)", env=env, cwd=tmp_path) as term:
        term.prompt()
        term.line("go on")
        term.expect("Bash sh wait.sh")  # running
        term.send("y")  # typed ahead, while the command runs: before any question
        (tmp_path / "go").touch()
        term.expect("Allow? [y/a/N]")
        term.send("n")
        term.expect("declined")
        term.send("\x04")
        assert term.wait() == 0
    assert not (tmp_path / "d.txt").exists()


def test_without_a_terminal_on_stdout_the_answer_is_still_a_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(write("a.txt"), Reply(text="wrote a"))
    piped = ("/bin/bash", "-c", f"{sys.executable} -m react_agent_mini | cat")  # `ram | tee log`: plain lines
    with Term(env=env_for("openai", fake_llm), cwd=tmp_path, program=piped) as term:
        term.expect("> ")
        term.line("write a")
        term.expect("Allow? [y/a/N]")
        term.line("always")  # a word and Enter, as before
        term.expect("wrote a")
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "a.txt").exists()
    assert "allowed for this session: Edit(./a.txt)" in term.text


# ---- item 17: `@path` ----


def test_a_file_named_with_at_in_a_message_is_attached(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def add(a, b):\n    return a - b\n")
    fake_llm.enqueue(Reply(text="It subtracts."))
    with Term(env=env_for("openai", fake_llm), cwd=tmp_path) as term:
        term.prompt()
        term.line("explain @src/app.py")
        assert "attached src/app.py" in term.expect("It subtracts.")
        term.send("\x04")
        assert term.wait() == 0
    assert sent(fake_llm) == [
        {"role": "user", "content": "Contents of @src/app.py (src/app.py):\n\n1\tdef add(a, b):\n2\t    return a - b"},
        {"role": "user", "content": "explain @src/app.py"},
    ]


def test_tab_completes_a_path_in_a_custom_commands_arguments(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hi')\n")
    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "review.md").write_text("Review $ARGUMENTS carefully.\n")
    fake_llm.enqueue(Reply(text="looks fine"))
    with Term(env=env_for("openai", fake_llm), cwd=tmp_path) as term:
        term.prompt()
        term.send("/review @sr\t")  # the only candidate is taken at once: @src/
        term.expect("src/")
        term.send("ap\t")
        term.expect(".py")
        term.settle()
        assert "> /review @src/app.py" in term.screen()
        term.send("\r")
        term.expect("looks fine")
        term.send("\x04")
        assert term.wait() == 0
    request = sent(fake_llm)
    assert request[-1] == {"role": "user", "content": "Review @src/app.py carefully."}
    assert json.dumps(request).count("print('hi')") == 1  # the command attached the file it names, once


# ---- item 6: an unknown key in `permissions` ----


def test_an_unknown_permissions_key_makes_the_repl_ask_for_every_call(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"dney": ["Read(./notes.txt)"]}}))
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]), Reply(text="read it"))
    with Term(env=env_for("openai", fake_llm), cwd=tmp_path) as term:
        shown = term.expect("every tool call is asked for")
        assert "error: .claude/settings.json: unknown key `permissions.dney` (did you mean `deny`?)" in shown
        term.prompt()
        term.line("read the notes")
        asked = term.expect("Allow? [y/a/N]")  # a read inside the workspace, asked for: the rules are unknown
        assert "Read notes.txt" in asked and ".claude/settings.json could not be understood" in asked
        term.send("n")
        term.expect("declined")
        term.send("\x04")
        assert term.wait() == 0


# ---- item 21b: one count ----


def test_the_listing_and_the_resumed_session_say_the_same_number_of_messages(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    env = env_for("openai", fake_llm)
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Echo", {"message": "a"})]), Reply(text="first"))
    assert ram("one", env=env, cwd=tmp_path).returncode == 0
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Echo", {"message": "b"})]), Reply(text="second"))
    assert ram("-c", "two", env=env, cwd=tmp_path).returncode == 0
    fake_llm.enqueue(Reply(text="SUMMARY: the user asked for two echoes."))
    assert ram("-c", "/compact", env=env, cwd=tmp_path).returncode == 0  # the history is rewritten: fewer messages
    listing = ram("--resume", env=env, cwd=tmp_path)
    found = re.search(r"^\s+1\. (\S+)\s+\S+ \S+\s+(\d+) messages  one$", listing.stdout, re.MULTILINE)
    assert found is not None, listing.stdout
    session, listed = found[1], int(found[2])
    with Term("--resume", session, env=env, cwd=tmp_path) as term:
        resumed = term.expect(" messages")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    said = re.search(r"resumed session \S+ · (\d+) messages", resumed)
    assert said is not None, resumed
    assert int(said[1]) == listed == 7  # summary boundary and summary, both user messages, the last exchange


def test_keys_typed_before_the_trust_question_never_answer_it(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    hook = {"type": "command", "command": f"touch {tmp_path}/started"}
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}}))
    servers = tmp_path / ".mcp.json"
    os.mkfifo(servers)  # the question waits until the test has typed: reading the folder's servers blocks till then
    fed = threading.Thread(target=servers.write_text, args=('{"mcpServers": {}}',), daemon=True)
    with Term(env=env_for("openai", fake_llm), cwd=tmp_path) as term:
        term.prompt()  # the first frame: ready to type at once
        term.send("yes, fix it")  # typed ahead, meant as a message
        fed.start()
        term.expect("Trust this folder? [y/N]")
        fed.join()
        servers.unlink()
        servers.write_text('{"mcpServers": {}}')
        term.send("n")
        term.expect("not trusted: those parts are left out")
        term.send("\x04")
        assert term.wait() == 0
    assert not (tmp_path / "started").exists()
