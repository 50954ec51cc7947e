"""Custom slash commands (`custom_commands`): what the files say, the expansions, and `ram "/review …"` end to end
with real files, real `!` commands through the permission policy, and the loopback fake LLM."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from react_agent_mini.custom_commands.catalog import CustomCommand, discover_commands
from react_agent_mini.custom_commands.expand import bang_commands, mentions, replace_bangs, substitute

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..stream_json.test_sdk_protocol import Ram
from ..test_cli import assert_no_traceback, env_for, ram

pytestmark = pytest.mark.usefixtures("trusted")  # the project's own configuration applies (see trust/)


def write(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def user_dir() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini"


# ---- expansion ----


@pytest.mark.parametrize(
    ("body", "args", "expected"),
    [
        ("Fix issue #$ARGUMENTS.", "123 urgently", "Fix issue #123 urgently."),
        (
            "Review PR #$1 with priority $2 and assign to $3.",
            '456 high "Ann Lee"',
            "Review PR #456 with priority high and assign to Ann Lee.",
        ),
        ("Only $1 and $4.", "a b", "Only a and ."),
        ("Say hi.", "to everyone", "Say hi.\n\nARGUMENTS: to everyone"),
        ("Say hi.", "", "Say hi."),
        ("Echo $ARGUMENTS", "costs $1 and $ARGUMENTS", "Echo costs $1 and $ARGUMENTS"),  # not expanded twice
        ("Quote $1", "it's", "Quote it's"),  # unbalanced quotes: split on spaces
    ],
)
def test_arguments(body: str, args: str, expected: str) -> None:
    assert substitute(body, args) == expected


def test_bang_commands_and_mentions() -> None:
    text = "Status: !`git status --short`\nDiff: !`git diff HEAD`\nnot a command: `ls` and ! `x`"
    assert bang_commands(text) == ["git status --short", "git diff HEAD"]
    assert replace_bangs(text, ["M a.py", "+x"]).splitlines()[:2] == ["Status: M a.py", "Diff: +x"]
    body = "Compare @src/old.py with @src/new.py, mail ann@example.com, see @docs/a.md. And @src/old.py, @srv:res://x"
    assert mentions(body) == ["src/old.py", "src/new.py", "docs/a.md"]


# ---- discovery ----


def test_commands_are_found_nearest_first_and_named_by_folder(tmp_path: Path) -> None:
    write(tmp_path, ".claude/commands/review.md", "---\ndescription: Review code\nargument-hint: [file] [focus]\n"
          "allowed-tools: Bash(git diff:*), Bash(git log:*)\nmodel: claude-sonnet-4-5\n---\nReview $1.\n")  # fmt: skip
    write(tmp_path, ".claude/commands/frontend/component.md", "# Scaffold a component\n\nCreate $ARGUMENTS.\n")
    write(tmp_path, ".agents/commands/review.md", "Our own review: $ARGUMENTS\n")  # .agents wins over .claude
    write(tmp_path, ".claude/commands/.hidden/x.md", "no")
    write(user_dir(), "commands/standup.md", "---\ndescription: 'Daily: what changed'\n---\nSummarise.\n")
    write(user_dir(), "commands/review.md", "the user's review\n")  # the project's wins
    found, warnings = discover_commands(tmp_path, user_dir())
    assert warnings == []
    assert [(c.name, c.description, c.scope) for c in found] == [
        ("frontend:component", "Scaffold a component", "project"),
        ("review", "Our own review: $ARGUMENTS", "project"),
        ("standup", "Daily: what changed", "user"),
    ]
    write(tmp_path, ".agents/commands/review.md", "")
    (tmp_path / ".agents/commands/review.md").unlink()
    review = next(c for c in discover_commands(tmp_path, user_dir())[0] if c.name == "review")
    assert review == CustomCommand(
        "review",
        tmp_path / ".claude/commands/review.md",
        "Review code",
        "[file] [focus]",
        ("Bash(git diff:*)", "Bash(git log:*)"),
        "claude-sonnet-4-5",
        "project",
    )


# ---- end to end ----


REVIEW = """\
---
description: Review a file
argument-hint: [file] [focus]
allowed-tools: Bash(touch:*)
---
## Context
- Lines: !`wc -l < $1`
- Marker: !`touch reviewed.marker && echo made`

Review @$1, focusing on $2.
"""


def test_a_custom_command_with_arguments_and_bang_and_at_expansions(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    write(tmp_path, ".claude/commands/review.md", REVIEW)
    write(tmp_path, "src/app.py", "def main():\n    return 1\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch during-the-turn"})]),
        Reply(text="Reviewed."),
    )
    proc = ram("/review src/app.py 'error handling'", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    sent = [m for m in fake_llm.requests[0].body["messages"] if m["role"] == "user"]
    assert sent == [
        {"role": "user", "content": "Contents of @src/app.py (src/app.py):\n\n1\tdef main():\n2\t    return 1"},
        {
            "role": "user",
            "content": "## Context\n- Lines: 2\n- Marker: made\n\nReview @src/app.py, focusing on error handling.",
        },
    ]
    # `touch` is not read-only: only the command's allowed-tools let it run headless, for the `!` and the turn
    assert (tmp_path / "reviewed.marker").exists() and (tmp_path / "during-the-turn").exists()


def test_allowed_tools_hold_for_the_commands_turn_only(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    write(tmp_path, ".claude/commands/make.md", "---\nallowed-tools: Bash(touch:*)\n---\nMake $1.\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch one"})]),
        Reply(text="made one"),
        Reply(tool_calls=[ToolCall("Bash", {"command": "touch two"})]),
        Reply(text="could not"),
    )
    agent = Ram(env=env_for("openai", fake_llm), cwd=tmp_path)
    init = agent.response(agent.control("initialize"))
    assert {"name": "make", "description": "Make $1.", "argumentHint": ""} in init["response"]["commands"]
    agent.user("/make one")
    first = agent.result()
    agent.user("now make two")
    second = agent.result()
    assert agent.close() == 0
    assert first["is_error"] is False and first["permission_denials"] == []
    assert [d["tool_input"] for d in second["permission_denials"]] == [{"command": "touch two"}]
    assert (tmp_path / "one").exists() and not (tmp_path / "two").exists()
    init_line = next(line for line in agent.seen if line.get("subtype") == "init")
    assert "make" in init_line["slash_commands"]


def test_a_refused_bang_command_stops_the_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    write(tmp_path, ".claude/commands/clean.md", "Clean up: !`rm -rf build`\n")
    (tmp_path / "build").mkdir()
    proc = ram("/clean", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 1
    assert (
        "error: /clean: !`rm -rf build` was not run: Permission denied: Run: rm -rf build needs approval" in proc.stderr
    )
    assert fake_llm.requests == [] and (tmp_path / "build").is_dir()


def test_an_at_file_the_rules_deny_stops_the_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    write(tmp_path, ".claude/commands/leak.md", "Summarise @.env\n")
    write(tmp_path, ".env", "API_KEY=hunter2\n")
    write(tmp_path, ".claude/settings.json", json.dumps({"permissions": {"deny": ["Read(./.env)"]}}))
    proc = ram("/leak", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 1 and "reading @.env was not run" in proc.stderr
    assert fake_llm.requests == []


def test_namespaced_commands_a_model_and_what_is_not_a_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    write(tmp_path, ".claude/commands/frontend/component.md", "---\nmodel: fast-model\n---\nCreate $ARGUMENTS.\n")
    write(tmp_path, ".claude/commands/git/commit.md", "---\nmodel: claude-3-5-haiku-20241022\n---\nCommit $1.\n")
    write(tmp_path, ".claude/commands/backend/component.md", "Serve $1.\n")
    replies = ["created", "committed", "answered", "answered too", "ambiguous"]
    fake_llm.enqueue(*(Reply(text=text) for text in replies))
    env = env_for("openai", fake_llm)
    assert ram("/frontend:component Button", env=env, cwd=tmp_path).returncode == 0
    assert ram("/commit fixes", env=env, cwd=tmp_path).returncode == 0  # Claude Code's name for git/commit.md
    assert ram("/nope please", env=env, cwd=tmp_path).returncode == 0
    assert ram("/etc/hosts is empty?", env=env, cwd=tmp_path).returncode == 0
    assert ram("/component Card", env=env, cwd=tmp_path).returncode == 0  # two commands end so: none is meant
    bodies = [r.body for r in fake_llm.requests]
    assert bodies[0]["messages"][-1]["content"] == "Create Button."
    assert bodies[0]["model"] == "fast-model" and bodies[2]["model"] == "deepseek-chat"
    # a Claude model id means nothing to this endpoint: the session's model answers the command
    assert bodies[1]["messages"][-1]["content"] == "Commit fixes." and bodies[1]["model"] == "deepseek-chat"
    assert [b["messages"][-1]["content"] for b in bodies[2:]] == [
        "/nope please",
        "/etc/hosts is empty?",
        "/component Card",
    ]
