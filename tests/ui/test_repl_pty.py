"""The REPL end to end: `ram` in a real pseudo-terminal, the loopback fake LLM server as the model.

The fake server validates every request like the real API (a tool call without its result is a 400), so a
conversation that goes on after an interrupt, a refusal or a crash proves the history stayed valid.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from react_agent_mini import transcript

from ..fakes.fake_llm import FakeLLMServer, HttpError, Reply, ToolCall
from ..fakes.mcp_servers import support
from ..processes import pids_with, wait_until
from ..test_cli import env_for
from .test_repl_minimal import Term


def ram_term(fake_llm: FakeLLMServer, cwd: Path, *args: str, **env: str) -> Term:
    return Term(*args, env=env_for("openai", fake_llm, **env), cwd=cwd)


def sent(fake_llm: FakeLLMServer, index: int = -1) -> list[dict[str, object]]:
    """The messages of a request, without the system prompt."""
    return [m for m in fake_llm.requests[index].body["messages"] if m["role"] != "system"]


def test_the_answer_streams_as_markdown_and_the_status_line_follows(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    answer = "# Plan\n\nFirst **read** the file.\n\n- one\n- two\n\n```python\nprint('hi')\n```\n\nDone."
    fake_llm.enqueue(Reply(text=answer, chunk_size=5, delay=0.02))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("make a plan")
        shown = term.expect("out tokens · $0.0000")  # deepseek-chat has a price; 120 tokens cost ~nothing
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert "First read the file." in shown  # rendered Markdown (the live area showed the raw tail meanwhile)
    final = term.screen()  # what stays on the screen: no asterisks, no heading marks, no fences
    assert "First read the file." in final and "**" not in final and "# Plan" not in final and "```" not in final
    assert "• one" in final and "print('hi')" in final and "Done." in final
    assert "ctx ~" in shown and "100 in / 20 out tokens" in shown
    assert sent(fake_llm) == [{"role": "user", "content": "make a plan"}]
    assert "Traceback" not in term.text


def test_permission_prompts_show_the_diff_and_take_y_a_and_n(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Reply(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"})]),
        Reply(text="fixed"),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch b.txt"})]),  # answered a
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch c.txt"})]),  # allowed by the rule, no prompt
        Reply(text="touched"),
        Reply(
            tool_calls=[
                ToolCall("Write", {"file_path": "d.txt", "content": "four\n"}),
                ToolCall("Bash", {"command": "ls"}),
            ]
        ),
        Reply(text="as you wish"),
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("fix calc")
        asked = term.expect("Allow? [y/a/N]")
        assert "Edit calc.py" in asked and "needs permission: it changes files" in asked
        assert "2 -     return a - b" in asked and "2 +     return a + b" in asked  # the diff, with line numbers
        assert "a = always allow Edit(./calc.py)" in asked
        term.send("y")  # one key answers: no Enter
        done = term.expect("fixed")
        assert "● Edit calc.py" in done and "2 +     return a + b" not in done  # the diff is not shown twice
        term.prompt()
        term.line("touch things")
        asked = term.expect("Allow? [y/a/N]")
        assert "$ touch b.txt" in asked and "Bash(touch:*)" in asked
        term.send("a")
        after = term.expect("touched")
        assert "allowed for this session: Bash(touch:*)" in after and "needs permission" not in after
        assert "● Bash touch c.txt" in after
        term.prompt()
        term.line("write d")
        asked = term.expect("Allow? [y/a/N]")
        assert "Write d.txt" in asked and "new file · 1 line, 5 bytes" in asked and "1 + four" in asked
        term.send("n")
        refused = term.expect("out tokens")
        assert "✗ Write d.txt — declined" in refused and "✗ Bash ls — skipped" in refused
        assert "you declined Write d.txt" in refused
        term.prompt()
        term.line("ok then")
        term.expect("as you wish")
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (tmp_path / "b.txt").exists() and (tmp_path / "c.txt").exists()
    assert not (tmp_path / "d.txt").exists()
    last = sent(fake_llm)
    assert last[-1] == {"role": "user", "content": "ok then"}
    assert [m["role"] for m in last[-5:-1]] == ["user", "assistant", "tool", "tool"]


def test_ctrl_c_mid_stream_then_another_question(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    story = "Once upon a time " + "there was a very long story, " * 60 + "the end."
    fake_llm.enqueue(Reply(text=story, chunk_size=4, delay=0.03), Reply(text="A short one."))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("tell a story")
        term.expect("Once upon a time")
        term.send("\x03")
        term.expect("Interrupted. The conversation goes on")
        term.expect("out tokens")
        term.prompt()
        term.line("shorter please")
        term.expect("A short one.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert "the end." not in term.text
    # the half-streamed answer never joined the history; the server (which checks pairing) took the request
    assert sent(fake_llm) == [
        {"role": "user", "content": "tell a story"},
        {"role": "user", "content": "shorter please"},
    ]


def test_ctrl_c_stops_a_running_command_and_its_process(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "sleep 31.4159"})]),
        Reply(text="Understood."),
    )
    with ram_term(fake_llm, tmp_path, "--allowed-tools", "Bash(sleep:*)") as term:
        term.prompt()
        term.line("wait a bit")
        term.expect("Bash sleep 31.4159")  # the spinner names the running command
        assert wait_until(lambda: pids_with("31.4159"))
        term.send("\x03")
        stopped = term.expect("out tokens")
        assert "✗ Bash sleep 31.4159 — interrupted" in stopped and "Interrupted." in stopped
        term.prompt()
        term.line("never mind")
        term.expect("Understood.")
        term.send("\x04")
        assert term.wait() == 0
    assert not pids_with("31.4159")
    tool = [m for m in sent(fake_llm) if m["role"] == "tool"]
    assert len(tool) == 1 and "Interrupted by the user" in str(tool[0]["content"])


def test_status_permissions_revoke_compact_clear_and_exit(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    long_text = "word " * 300
    fake_llm.enqueue(
        Reply(text="first answer " + long_text),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch x.txt"})]),  # answered a
        Reply(text="second answer " + long_text),
        Reply(text="SUMMARY: the user asked twice."),  # the /compact summary
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch y.txt"})]),  # the rule was revoked: asks again
        Reply(text="after clear"),
    )
    env = {"CONTEXT_WINDOW_TOKENS": "2000", "AUTOCOMPACT": "0"}
    with ram_term(fake_llm, tmp_path, **env) as term:
        term.prompt()
        term.line("first " + "question " * 100)
        term.expect("out tokens")
        term.line("second")
        term.expect("Allow? [y/a/N]")
        term.send("a")
        term.expect("out tokens")
        term.line("/status")
        status = term.expect("session ")
        assert "openai:deepseek-chat" in status and "of 2,000 tokens" in status
        assert "300 in (0 from cache" in status and "3 model calls" in status and "at list price" in status
        assert "default mode · 1 rule(s) recorded" in status and "no servers configured" in status
        term.line("/permissions")
        listing = term.expect("revoke one with")
        assert "1. Bash(touch:*)" in listing
        term.line("/permissions revoke 1")
        term.expect("revoked Bash(touch:*)")
        term.line("/compact keep the file names")
        term.expect("Compacted the conversation")
        term.prompt()
        term.line("/clear")
        term.expect("conversation cleared")
        term.line("touch again")
        asked = term.expect("Allow? [y/a/N]")
        assert "touch y.txt" in asked
        term.send("y")
        term.expect("after clear")
        term.prompt()
        term.line("/exit")
        assert term.wait() == 0
    summary_request = fake_llm.requests[3].body["messages"]
    assert "keep the file names" in json.dumps(summary_request)
    assert sent(fake_llm, 4) == [{"role": "user", "content": "touch again"}]  # /clear forgot everything
    sessions = transcript.list_sessions(tmp_path)
    assert len(sessions) == 2  # /clear started a new session; the old one is still there to resume


def test_a_skill_command_runs_the_skill_and_unknown_commands_stay_local(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    skill = tmp_path / ".agents" / "skills" / "review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\ndescription: Review a change.\n---\nREVIEW-BODY: read the diff first.\n")
    fake_llm.enqueue(Reply(text="reviewed"), Reply(text="path noted"))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("/nope")
        term.expect("unknown command /nope")
        term.line("/nope:prompt")
        term.expect("unknown command /nope:prompt")
        term.line("/help")
        helped = term.expect("keys:")
        assert "/review" in helped and "Review a change." in helped
        term.line("/review the last commit")
        term.expect("loaded skill review")
        term.expect("reviewed")
        term.prompt()
        term.line("/etc/hosts looks odd")  # a path, not a command: it goes to the model
        term.expect("path noted")
        term.send("\x04")
        assert term.wait() == 0
    assert len(fake_llm.requests) == 2  # the unknown commands never reached the model
    first = sent(fake_llm, 0)
    assert "REVIEW-BODY" in str(first[0]["content"]) and first[-1] == {"role": "user", "content": "the last commit"}
    assert sent(fake_llm)[-1] == {"role": "user", "content": "/etc/hosts looks odd"}


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
def test_an_mcp_prompt_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    config = {"mcpServers": {"toolbox": {"command": sys.executable, "args": [str(support.TOOLBOX)]}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    fake_llm.enqueue(Reply(text="trip planned"))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("/toolbox:plan_trip Paris 2")
        term.expect("trip planned")
        term.line("/toolbox:nothing")
        term.expect("unknown MCP prompt /toolbox:nothing; available: /toolbox:plan_trip")
        term.line("/status")
        assert "toolbox connected" in term.expect("session ")
        term.send("\x04")
        assert term.wait() == 0
    assert "Plan a trip to Paris for 2 day(s)." in json.dumps(sent(fake_llm))


def test_multiline_input_history_and_completion(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "calculator.py").write_text("x = 1\n")
    fake_llm.enqueue(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.send("line one\x1b\r")  # Esc Enter: a new line
        term.send("line two\\\r")  # a backslash at the end: a new line too
        term.line("line three")
        assert "one" in term.expect("out tokens")
        term.prompt()
        term.send("look at @calcu\t")  # Tab completes the path (the request below shows it)
        term.expect("calculator.py")  # the completion menu
        term.send("\r")
        assert "two" in term.expect("out tokens")
        term.prompt()
        term.send("/stat\t")  # Tab typed at once takes the only candidate, even while the menu is loading
        term.settle()
        term.send("\r")
        term.expect("model        openai:deepseek-chat")
        assert "2 model calls" in term.expect("5 messages")  # the second message's @calculator.py was attached
        term.send("\x03")  # Ctrl+C twice at an empty prompt: leave
        term.expect("press Ctrl+C again to exit")
        term.send("\x03")
        assert term.wait() == 130
    with ram_term(fake_llm, tmp_path) as term:  # the history survives: Up brings back the last message
        term.prompt()
        term.send("\x1b[A\x1b[A")  # /status, then the message before it
        term.settle()
        term.send("\r")
        assert "three" in term.expect("out tokens")
        term.send("\x04")
        assert term.wait() == 0
    assert sent(fake_llm, 0) == [{"role": "user", "content": "line one\nline two\nline three"}]
    assert sent(fake_llm, 1)[-2:] == [
        {"role": "user", "content": "Contents of @calculator.py (calculator.py):\n\n1\tx = 1"},
        {"role": "user", "content": "look at @calculator.py"},
    ]
    assert sent(fake_llm)[-1] == {"role": "user", "content": "look at @calculator.py"}


def test_kill_9_during_a_turn_then_continue_in_the_repl(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Running it.", tool_calls=[ToolCall("Bash", {"command": "sleep 27.1828"})]))
    with ram_term(fake_llm, tmp_path, "--allowed-tools", "Bash(sleep:*)") as term:
        term.prompt()
        term.line("do the slow thing")
        term.expect("Bash sleep 27.1828")
        directory = transcript.sessions_dir(tmp_path)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # the tool call is on disk before it runs
            files = list(directory.glob("*.jsonl")) if directory.is_dir() else []
            if files and "tool_use" in files[0].read_text():
                break
            time.sleep(0.05)
        os.kill(term.pid, signal.SIGKILL)
        term.wait()
    for pid in pids_with("27.1828"):  # the orphaned command (it has its own process group)
        os.kill(pid, signal.SIGKILL)
    fake_llm.enqueue(Reply(text="Picking up again."))
    with ram_term(fake_llm, tmp_path, "--continue") as term:
        recap = term.expect("agent: Running it.")
        assert "resumed session" in recap and "you: do the slow thing" in recap
        term.prompt()
        term.line("carry on")
        term.expect("Picking up again.")
        term.send("\x04")
        assert term.wait() == 0
    messages = sent(fake_llm)
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "user"]
    assert str(messages[2]["content"]).startswith("Error: Interrupted")
    assert messages[-1] == {"role": "user", "content": "carry on"}


def test_resume_switches_to_another_saved_session(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Hello Ada."))
    first = subprocess.run(
        [sys.executable, "-m", "react_agent_mini", "My name is Ada."],
        env=env_for("openai", fake_llm),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert first.returncode == 0, first.stderr
    fake_llm.enqueue(Reply(text="You are Ada."))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("/resume")
        listing = term.expect("Resume which session?")
        assert "1." in listing and "My name is Ada." in listing
        term.line("1")
        assert "agent: Hello Ada." in term.expect("Hello Ada.")
        term.prompt()
        term.line("What is my name?")
        term.expect("You are Ada.")
        term.send("\x04")
        assert term.wait() == 0
    assert sent(fake_llm) == [
        {"role": "user", "content": "My name is Ada."},
        {"role": "assistant", "content": "Hello Ada."},
        {"role": "user", "content": "What is my name?"},
    ]
    assert len(transcript.list_sessions(tmp_path)) == 1  # the unused new session left no file behind


def test_memory_and_init(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    memory = tmp_path / ".agents" / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text("- deploys happen on **Tuesdays**\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "AGENTS.md", "content": "# AGENTS.md\n\nRun `pytest`.\n"})]),
        Reply(text="Wrote AGENTS.md."),
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("/memory")
        shown = term.expect("Tuesdays")
        assert ".agents/memory/MEMORY.md" in shown and "**" not in shown
        term.line("/init")
        asked = term.expect("Allow? [y/a/N]")
        assert "Write AGENTS.md" in asked and "1 + # AGENTS.md" in asked
        term.send("y")
        term.expect("Wrote AGENTS.md.")
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "AGENTS.md").read_text().startswith("# AGENTS.md")
    task = str(sent(fake_llm, 0)[0]["content"])
    assert "AGENTS.md" in task and "Explore first" in task and "There is none yet." in task


def test_plain_lines_when_the_output_is_not_a_terminal(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """stdin is a terminal, stdout a file: the REPL falls back to plain line input and plain output."""
    import pty

    fake_llm.enqueue(Reply(text="plain **answer**"))
    master, slave = pty.openpty()
    out_path = tmp_path / "out.txt"
    with out_path.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "react_agent_mini"],
            stdin=slave,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env_for("openai", fake_llm),
            cwd=tmp_path,
        )
    os.close(slave)
    try:
        os.write(master, b"hello\n")
        deadline = time.monotonic() + 20
        while "out tokens" not in out_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.write(master, b"/status\n")
        while "model calls" not in out_path.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.write(master, b"\x04")  # end of input
        assert proc.wait(timeout=20) == 0
    finally:
        proc.kill()
        os.close(master)
    text = out_path.read_text()
    assert "plain answer" in text and "1 model calls" in text
    assert "\x1b[" not in text and "Traceback" not in text
    assert sent(fake_llm) == [{"role": "user", "content": "hello"}]


def test_a_working_session_then_exit_and_continue(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """The issue's "done when": edits, a denied command, an interrupt and a /compact, then exit and
    `ram --continue` — the conversation picks up where it left off, with a valid history."""
    (tmp_path / "notes.txt").write_text("draft\n")
    story = "Once upon a time " + "there was a very long story, " * 60 + "the end."
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
        Reply(tool_calls=[ToolCall("Edit", {"file_path": "notes.txt", "old_string": "draft", "new_string": "final"})]),
        Reply(text="Edited notes.txt."),
        Reply(tool_calls=[ToolCall("Bash", {"command": "rm notes.txt"})]),  # denied: the turn ends
        Reply(text=story, chunk_size=4, delay=0.03),  # interrupted
        Reply(text="SUMMARY: notes.txt now says final; the user refused to delete it."),  # /compact
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("finalise the notes")
        term.expect("Allow? [y/a/N]")
        term.send("y")
        term.expect("Edited notes.txt.")
        term.prompt()
        term.line("now delete them")
        assert "$ rm notes.txt" in term.expect("Allow? [y/a/N]")
        term.send("n")
        term.expect("out tokens")
        term.prompt()
        term.line("tell a story")
        term.expect("Once upon a time")
        term.send("\x03")
        term.expect("Interrupted")
        term.prompt()
        term.line("/compact")
        term.expect("Compacted the conversation")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
        assert "ram --continue" in term.text
    assert (tmp_path / "notes.txt").read_text() == "final\n"
    fake_llm.enqueue(Reply(text="Picking up: the notes are final."))
    with ram_term(fake_llm, tmp_path, "--continue") as term:
        term.expect("resumed session")
        term.prompt()
        term.line("where were we?")
        term.expect("Picking up: the notes are final.")
        term.send("\x04")
        assert term.wait() == 0
    resumed = json.dumps(sent(fake_llm))
    assert "SUMMARY: notes.txt now says final" in resumed  # the summary the /compact wrote
    for typed in ("finalise the notes", "now delete them", "tell a story", "where were we?"):
        assert typed in resumed  # every message the user typed, word for word
    assert "the end." not in resumed  # the interrupted answer never joined the history


def test_escape_sequences_from_the_model_cannot_clear_the_screen_or_fake_a_prompt(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(text="before \x1b[2J\x1b[H\x1b[41mCLEARED\x1b[0m after"),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch PWNED #\x1b[2K\r  $ echo hello"})]),
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("say something")
        term.expect("out tokens")
        term.prompt()
        term.line("run something")
        term.expect("Allow? [y/a/N]")
        screen = term.screen()
        assert "> say something" in screen  # nothing cleared the screen
        assert "before ^[[2J^[[H^[[41mCLEARED^[[0m after" in screen
        assert "$ touch PWNED #^[[2K^M  $ echo hello" in screen  # the real command, its trick in plain sight
        term.send("n")
        term.expect("declined")
        term.send("\x04")
        assert term.wait() == 0
    assert not (tmp_path / "PWNED").exists()


def test_when_nothing_can_be_saved_it_says_so_once_and_offers_no_resume(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="first"), Reply(text="second"))
    with ram_term(fake_llm, tmp_path, XDG_DATA_HOME="/proc/nonexistent/data") as term:
        term.prompt()
        term.line("one")
        term.expect("out tokens")
        term.prompt()
        term.line("two")
        term.expect("out tokens")
        term.prompt()
        term.line("/clear")
        cleared = term.expect("a new session starts")
        term.line("/exit")
        assert term.wait() == 0
    assert "(the previous one is in /resume)" not in term.text[term.text.find(cleared) :]
    assert term.text.count("will not be saved") == 1
    assert "ram --continue" not in term.text


def test_a_context_length_error_says_what_to_do_and_the_recap_pairs_the_last_exchange(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    too_long = "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens."
    # refused, and the summary that would make it fit is refused too (and so is the retry with the outbound
    # threshold tightened to the stated window, where that lowers it): the error, and what to do
    fake_llm.enqueue(Reply(text="The first answer."), *[HttpError(400, too_long)] * 3)
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("first question")
        term.expect("out tokens")
        term.prompt()
        term.line("second question")
        failed = term.expect("out tokens")
        assert "maximum context length" in failed and "/compact shrinks it" in failed
        term.send("\x04")
        assert term.wait() == 0
    with ram_term(fake_llm, tmp_path, "--continue") as term:
        recap = term.expect("resumed session")
        recap += term.expect("> ")
        assert "you: second question" in recap
        assert "agent: (no answer: the turn did not finish)" in recap and "The first answer." not in recap
        term.send("\x04")
        assert term.wait() == 0


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_sigterm_or_hangup_during_a_turn_stops_its_command_and_leaves(
    fake_llm: FakeLLMServer, tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    marker = f"31.{os.getpid()}{code}"
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": f"sleep {marker}"})]))
    with ram_term(fake_llm, tmp_path, "--allowed-tools", "Bash(sleep:*)") as term:
        term.prompt()
        term.line("do the slow thing")
        term.expect(f"Bash sleep {marker}")
        assert wait_until(lambda: pids_with(marker))
        os.kill(term.pid, sig)
        assert term.wait() == code
        assert "Traceback" not in term.text
    assert wait_until(lambda: not pids_with(marker), timeout=30)
