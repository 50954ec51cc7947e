"""A Claude Code user's repository, unchanged: `tests/data/claude_project` holds a `.claude/` directory written as
Claude Code's documentation writes one — settings with permissions and five hooks (scripts in `.claude/hooks/`), two
agents, two commands, one in a folder. `ram` runs in a copy of it, headless, with the loopback fake LLM answering the
main agent and the subagent; everything else (the hooks, the `!` commands, the tools) is real."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..subagents.test_cli_subagents import MAIN, Conversations, agent, tool_names, tool_results
from ..test_cli import assert_no_traceback, env_for, ram

pytestmark = pytest.mark.usefixtures("trusted")  # the project's own configuration applies (see trust/)

FIXTURE = Path(__file__).parents[1] / "data" / "claude_project"


def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    shutil.copytree(FIXTURE, root)
    git = ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "shop"], cwd=root, check=True)
    return root


NEW_ADD = '        if cents < 0:\n            raise ValueError("negative price")\n        self.items[name] = cents'


def test_the_claude_directory_works_unchanged(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    root = checkout(tmp_path)
    task = "Review src/shop/cart.py for money handling"
    talk = Conversations(
        {
            MAIN: [
                Reply(tool_calls=[agent("review cart.py", task, "code-reviewer")]),
                Reply(tool_calls=[ToolCall("Bash", {"command": "rm -rf build"})]),
                Reply(
                    tool_calls=[
                        ToolCall(
                            "Edit",
                            {
                                "file_path": "src/shop/cart.py",
                                "old_string": "        self.items[name] = cents",
                                "new_string": NEW_ADD,
                            },
                        )
                    ]
                ),
                Reply(text="add() now refuses negative prices."),
                Reply(tool_calls=[ToolCall("Bash", {"command": "git diff --stat"})]),
                Reply(text="Checked: one file changed."),
            ],
            task: [
                Reply(
                    tool_calls=[
                        ToolCall("Read", {"file_path": "src/shop/cart.py"}),
                        ToolCall("Bash", {"command": "ls"}),
                    ]
                ),
                Reply(text="src/shop/cart.py:8 add() accepts negative prices."),
            ],
        }
    )
    fake_llm.set_responder(talk)
    proc = ram("/review src/shop/cart.py money", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=root)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    main, sub = talk.seen[MAIN], talk.seen[task]
    first = [m["content"] for m in main[0].body["messages"] if m["role"] == "user"]
    assert first[0] == "SessionStart hook additional context: Current branch: main"
    assert first[1].startswith("Contents of @src/shop/cart.py (src/shop/cart.py):\n\n1\t")  # the command's @file
    assert first[2] == "UserPromptSubmit hook additional context: Project rule reminder: prices are integers in cents."
    assert "- Git status: (no output)\n- Size: 12 src/shop/cart.py" in first[3]  # the `!` commands' output
    assert "with a focus on money. Use the code-reviewer agent" in first[3]
    # the agent file: its body is the system prompt, `tools:` holds, `model: sonnet` means nothing to DeepSeek
    assert sub[0].body["messages"][0]["content"].startswith("You are a senior code reviewer")
    assert tool_names(sub[0]) == ["Read", "Glob", "Grep"] and sub[0].body["model"] == "deepseek-chat"
    assert tool_results(sub[1])[1] == "Error: Unknown tool: Bash. Available tools: Read, Glob, Grep."
    assert tool_results(main[1]) == ["src/shop/cart.py:8 add() accepts negative prices."]
    # the Bash validator (exit 2), the edit hook's context (JSON), the Stop hook (JSON decision: block)
    assert tool_results(main[2])[-1] == (
        "Error: Blocked by a PreToolUse hook: • Do not delete directories with rm -rf; move them to trash/ instead."
    )
    assert tool_results(main[3])[-1].endswith(
        "\n\nEdited src/shop/cart.py: keep the code free of I/O and run the tests."
    )
    assert main[4].body["messages"][-1] == {
        "role": "user",
        "content": "Stop hook feedback: Run the tests with `python -m pytest -q` before you finish.",
    }
    assert "1 file changed" in tool_results(main[5])[-1]  # allowed by the settings' `Bash(git diff:*)`
    assert NEW_ADD in (root / "src/shop/cart.py").read_text()
    assert proc.stdout == "add() now refuses negative prices.\nChecked: one file changed.\n"
    assert "[tool] Agent: review cart.py (code-reviewer)\n  [tool] Read: src/shop/cart.py\n" in proc.stderr

    blocked = ram("my password: hunter2, deploy", env=env_for("openai", fake_llm), cwd=root)
    assert blocked.returncode == 1 and len(fake_llm.requests) == 8  # the prompt never reached the model
    assert "Your prompt seems to contain a secret; remove it and retry." in blocked.stderr
