"""Claude Code's extension points in the REPL, on a real pseudo-terminal with the loopback fake LLM: the task list as
a checklist, a subagent's calls under its Agent line (and Ctrl+C stopping it), custom commands in /help, completion
and as turns, /hooks, /agents, and the Notification hooks of a permission prompt and of an idle prompt."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..processes import pids_with, wait_until
from .test_repl_pty import ram_term, sent

PLAN = {
    "todos": [
        {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
        {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
        {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests"},
    ]
}


def test_the_task_list_is_shown_as_a_checklist_and_kept_across_compact(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("TodoWrite", PLAN)]),
        Reply(text="Planned it."),
        Reply(text="Reading done."),
        Reply(text="SUMMARY of the work so far."),
        Reply(text="Carrying on."),
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("plan the fix")
        shown = term.expect("Planned it.")
        term.prompt()
        term.line("go on")
        term.expect("Reading done.")
        term.prompt()
        term.line("/compact")
        term.expect("Compacted the conversation")
        term.prompt()
        term.line("and now?")
        term.expect("Carrying on.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert "● TodoWrite 1/3 done" in shown
    assert "⎿ ☒ Read the code" in shown and "◼ Fixing the bug" in shown and "☐ Run the tests" in shown
    assert "[~] Fix the bug" in json.dumps(sent(fake_llm))  # re-injected after the summary


def test_a_subagents_calls_show_under_its_agent_line(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text("print('hi')\n")
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall(
                    "Agent", {"description": "find prints", "prompt": "Find print calls", "subagent_type": "Explore"}
                )
            ]
        ),
        Reply(tool_calls=[ToolCall("Grep", {"pattern": "print"}), ToolCall("Read", {"file_path": "app.py"})]),
        Reply(text="app.py:1 prints hi"),
        Reply(text="There is one print, in app.py."),
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("where do we print?")
        shown = term.expect("There is one print, in app.py.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    lines = [line.strip() for line in term.screen().splitlines()]
    start = lines.index("● Agent find prints (Explore)")
    inner = sorted(line.removeprefix("⎿ ") for line in lines[start + 1 : start + 3])  # they ran in parallel
    assert inner[0].startswith("Grep ") and "print" in inner[0] and inner[1] == "Read app.py"
    assert lines[start + 1].startswith("⎿ ") and not lines[start + 2].startswith("⎿ ")
    assert lines[start + 3] == "⎿ done · 2 tool calls"
    assert "Traceback" not in shown


def test_ctrl_c_stops_a_subagent_and_its_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    marker = "31.4159265"
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Agent", {"description": "wait", "prompt": "Wait a long time"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": f"sleep {marker}"})]),
        Reply(text="Fine, stopped."),
    )
    with ram_term(fake_llm, tmp_path, ALLOW_WRITE="1") as term:
        term.prompt()
        term.line("wait")
        term.expect("● Agent wait (general-purpose)")
        assert wait_until(lambda: pids_with(f"sleep {marker}"))
        term.send("\x03")
        term.expect("Interrupted. The conversation goes on")
        assert wait_until(lambda: not pids_with(f"sleep {marker}"))
        term.prompt()
        term.line("ok, stop")
        term.expect("Fine, stopped.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    history = sent(fake_llm)
    assert history[-1] == {"role": "user", "content": "ok, stop"}
    assert history[-2]["role"] == "tool" and "Interrupted" in str(history[-2]["content"])


def test_custom_commands_in_help_completion_and_as_turns(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    commands = tmp_path / ".claude" / "commands"
    (commands / "git").mkdir(parents=True)
    (commands / "git" / "summary.md").write_text(
        "---\ndescription: Summarise recent work\nargument-hint: [days]\n---\nSummarise the last $1 days.\n"
    )
    fake_llm.enqueue(Reply(text="Three days of work."))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("/help")
        helped = term.expect("keys:")
        term.prompt()
        term.send("/git:su\t")  # only one candidate: Tab takes it (the message sent below shows it)
        term.settle()
        term.send(" 3\r")
        term.expect("Three days of work.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert "custom commands (.claude/commands/, .agents/commands/):" in helped
    assert "/git:summary [days]" in helped and "Summarise recent work" in helped
    assert sent(fake_llm)[-1] == {"role": "user", "content": "Summarise the last 3 days."}


@pytest.mark.usefixtures("trusted")  # the project's own configuration applies
def test_hooks_and_agents_are_listed_and_notification_hooks_run(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    log = tmp_path / "notified.log"
    record = f"python3 -c 'import json,sys; print(json.load(sys.stdin)[\"notification_type\"])' >> {log}"
    settings = {
        "hooks": {
            "Notification": [{"hooks": [{"type": "command", "command": record}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "exit 0", "timeout": 5}]}],
        }
    }
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(settings))
    (tmp_path / ".claude" / "agents").mkdir()
    (tmp_path / ".claude" / "agents" / "docs.md").write_text(
        "---\ndescription: Writes docs\ntools: Read, Write\n---\nWrite docs.\n"
    )
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "touch x"})]), Reply(text="Touched."))
    with ram_term(fake_llm, tmp_path, RAM_IDLE_NOTIFY_SECONDS="0") as term:
        started = term.expect("(/hooks lists them; --setting-sources user leaves them out)")
        term.prompt()
        term.line("/hooks")
        listed = term.expect("PreToolUse")
        term.expect("timeout 5 s)")
        term.prompt()
        term.line("/agents")
        agents = term.expect("Explore")
        term.prompt()
        term.line("touch it")
        term.expect("Allow? [y/a/N]")
        term.send("y")
        term.expect("Touched.")
        term.prompt()
        assert wait_until(lambda: log.exists() and len(log.read_text().splitlines()) == 2)
        term.send("\x04")
        assert term.wait() == 0
    assert "defines 2 hook commands that run on this machine, outside the sandbox" in started
    assert "Notification" in started and "PreToolUse(Bash)" in started
    assert "hooks (each runs on this machine, outside the sandbox" in listed
    assert "docs" in agents and "Read, Write" in agents and "general-purpose" in agents
    assert log.read_text().splitlines() == ["permission_prompt", "idle_prompt"]
    assert (tmp_path / "x").exists() and not os.environ.get("RAM_IDLE_NOTIFY_SECONDS")
