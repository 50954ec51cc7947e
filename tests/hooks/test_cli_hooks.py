"""Hooks from settings files, end to end: `ram` as a user runs it, real shell commands as hooks, the loopback fake
LLM as the model. What the model reads (the requests the server got) and what the user sees (stderr) are asserted."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..processes import pids_with, wait_until
from ..test_cli import ECHO, assert_no_traceback, env_for, ram

pytestmark = pytest.mark.usefixtures("trusted")  # the project's own configuration applies (see trust/)


def with_hooks(root: Path, hooks: dict[str, Any], name: str = ".claude/settings.json") -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


def command(text: str, matcher: str = "", timeout: float | None = None) -> list[dict[str, Any]]:
    hook: dict[str, Any] = {"type": "command", "command": text}
    if timeout is not None:
        hook["timeout"] = timeout
    return [{"matcher": matcher, "hooks": [hook]}]


def script(root: Path, name: str, body: str) -> str:
    """A hook script in `.claude/hooks/`, and the command that runs it (as Claude Code's docs write it)."""
    path = root / ".claude" / "hooks" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    path.chmod(0o755)
    return f'"$CLAUDE_PROJECT_DIR"/.claude/hooks/{name}'


def tool_message(fake_llm: FakeLLMServer, request: int = -1) -> str:
    """The content of the last tool message of a request (OpenAI wire)."""
    return str([m for m in fake_llm.requests[request].body["messages"] if m["role"] == "tool"][-1]["content"])


NO_RM = """\
    #!/usr/bin/env python3
    import json, sys
    command = json.load(sys.stdin)["tool_input"]["command"]
    if command.split()[:1] == ["rm"]:
        print("rm is not allowed in this project; move files to trash/ instead", file=sys.stderr)
        sys.exit(2)
"""


def test_a_pre_tool_use_hook_blocks_rm_with_exit_2_and_the_model_reads_why(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("precious\n")
    with_hooks(tmp_path, {"PreToolUse": command(script(tmp_path, "no_rm.py", NO_RM), "Bash")})
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "rm keep.txt"})]),
        Reply(tool_calls=[ToolCall("Bash", {"command": "mkdir -p trash && mv keep.txt trash/"})]),
        Reply(text="Moved it to trash/ instead."),
    )
    proc = ram("tidy up", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert tool_message(fake_llm, 1) == (
        "Error: Blocked by a PreToolUse hook: rm is not allowed in this project; move files to trash/ instead"
    )
    assert (tmp_path / "trash" / "keep.txt").read_text() == "precious\n"  # the second command was not blocked
    assert "defines 1 hook command that run on this machine, outside the sandbox, at: PreToolUse(Bash)" in proc.stderr
    assert proc.stdout == "Moved it to trash/ instead.\n"


def test_a_pre_tool_use_hook_rewrites_the_input_with_json_output(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    rewrite = script(
        tmp_path,
        "quiet.py",
        """\
        #!/usr/bin/env python3
        import json, sys
        event = json.load(sys.stdin)
        command = event["tool_input"]["command"]
        print(json.dumps({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "permissionDecisionReason": "made quiet",
            "updatedInput": {"command": command.replace("--verbose", "--quiet")},
        }}))
        """,
    )
    with_hooks(tmp_path, {"PreToolUse": command(rewrite, "Bash")})
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "echo --verbose"})]), Reply(text="done"))
    proc = ram("go", env=env_for("openai", fake_llm), cwd=tmp_path)  # headless, no ALLOW_WRITE: the hook allows it
    assert proc.returncode == 0, proc.stderr
    assert tool_message(fake_llm) == "--quiet"
    history = fake_llm.requests[-1].body["messages"]
    assert "--verbose" in json.dumps(history)  # the model's own call stays as it sent it


def test_a_post_tool_use_hook_adds_context_after_the_result(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("hello\n")
    context = json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PostToolUse",
                "additionalContext": "notes.md is generated; do not edit",
            }
        }
    )
    with_hooks(tmp_path, {"PostToolUse": command(f"echo '{context}'", "Read|Grep")}, ".agents/settings.json")
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.md"})]), Reply(text="ok"))
    proc = ram("read notes", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_message(fake_llm) == "1\thello\n\nnotes.md is generated; do not edit"


def test_a_user_prompt_submit_hook_blocks_the_prompt_and_the_user_reads_why(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    guard = script(
        tmp_path,
        "no_secrets.sh",
        """\
        #!/bin/bash
        if grep -qi 'password' <<<"$(cat)"; then echo "prompts must not contain passwords" >&2; exit 2; fi
        echo "Today is release day."
        """,
    )
    with_hooks(tmp_path, {"UserPromptSubmit": command(guard)})
    blocked = ram("my password is hunter2, log in", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(blocked)
    assert blocked.returncode == 1
    assert "Your message was blocked by a UserPromptSubmit hook: prompts must not contain passwords" in blocked.stderr
    assert "stopped: blocked by a UserPromptSubmit hook" in blocked.stderr
    assert fake_llm.requests == []  # the model never saw it
    fake_llm.enqueue(Reply(text="ok"))
    allowed = ram("ship it", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    sent = [m for m in fake_llm.requests[0].body["messages"] if m["role"] == "user"]
    context = "UserPromptSubmit hook additional context: Today is release day."
    assert sent == [{"role": "user", "content": context}, {"role": "user", "content": "ship it"}]


def test_a_stop_hook_makes_the_agent_continue_once(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    check = script(
        tmp_path,
        "tests_first.py",
        """\
        #!/usr/bin/env python3
        import json, sys
        if not json.load(sys.stdin)["stop_hook_active"]:
            print("Run the tests before you stop.", file=sys.stderr)
            sys.exit(2)
        """,
    )
    with_hooks(tmp_path, {"Stop": command(check)})
    fake_llm.enqueue(
        Reply(text="All done."),
        Reply(tool_calls=[ToolCall("Echo", {"message": "tests pass"})]),
        Reply(text="Tests pass."),
    )
    proc = ram(*ECHO, "fix it", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(fake_llm.requests) == 3  # the hook blocked once, then let it stop
    second = fake_llm.requests[1].body["messages"]
    assert second[-1] == {"role": "user", "content": "Stop hook feedback: Run the tests before you stop."}
    assert proc.stdout == "All done.\nTests pass.\n"


def test_a_hook_that_hangs_is_killed_at_its_timeout_and_the_run_goes_on(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    marker = f"ram-cli-hung-{os.getpid()}"
    hang = script(
        tmp_path, "hang.sh", f"#!/bin/bash\n(exec -a {marker}-child sleep 1000) &\nexec -a {marker} sleep 1001\n"
    )
    with_hooks(tmp_path, {"PreToolUse": command(hang, "Echo", timeout=1)})
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Echo", {"message": "still here"})]), Reply(text="fine"))
    proc = ram(*ECHO, "go", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "PreToolUse hook" in proc.stderr and "took longer than 1 s and was stopped" in proc.stderr
    assert tool_message(fake_llm) == "still here"  # a broken guard costs a warning, not the call
    assert wait_until(lambda: not pids_with(marker)), pids_with(marker)


def test_session_start_and_session_end_run_once_each(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    log = tmp_path / "events.log"
    said = 'print(e["hook_event_name"], e.get("source") or e.get("reason"))'
    record = f"python3 -c 'import json,sys; e=json.load(sys.stdin); {said}' >> {log}"
    with_hooks(
        tmp_path,
        {
            "SessionStart": [*command(record), *command("echo 'Deploys happen on Fridays.'", "startup")],
            "SessionEnd": command(record),
        },
    )
    fake_llm.enqueue(Reply(text="noted"))
    proc = ram("when do we deploy?", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().splitlines() == ["SessionStart startup", "SessionEnd other"]
    first = fake_llm.requests[0].body["messages"]
    assert {"role": "user", "content": "SessionStart hook additional context: Deploys happen on Fridays."} in first
    fake_llm.enqueue(Reply(text="again"))
    resumed = ram("-c", "and next week?", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert log.read_text().splitlines()[2:] == ["SessionStart resume", "SessionEnd other"]


def test_project_hooks_are_left_out_with_setting_sources_user(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    with_hooks(tmp_path, {"UserPromptSubmit": command("echo blocked >&2; exit 2")})
    fake_llm.enqueue(Reply(text="answered"))
    proc = ram("--setting-sources", "user", "hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "answered\n" and "hook" not in proc.stderr
