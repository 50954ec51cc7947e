"""Command hooks from settings files (`hooks.command`): what the files say, and real commands run as hooks — their
exit codes, stdout and stderr read as Claude Code reads them, the environment they get, and a hung one killed with
its whole process group at its timeout."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from react_agent_mini.hooks import HookOutput, Hooks
from react_agent_mini.hooks.command.config import CommandHook, load_command_hooks, project_hooks_line
from react_agent_mini.hooks.command.run import Finished, hook_entry, read_answer

from ..processes import pids_with, wait_until


def settings(root: Path, name: str, data: object) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def user_file() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"


def group(matcher: str, *commands: str, timeout: float | None = None) -> dict[str, object]:
    hooks = [{"type": "command", "command": c, **({"timeout": timeout} if timeout else {})} for c in commands]
    return {"matcher": matcher, "hooks": hooks}


# ---- what the settings files say ----


def test_every_file_counts_in_order_and_the_project_line_names_the_projects(tmp_path: Path) -> None:
    settings(user_file().parent, "settings.json", {"hooks": {"Notification": [group("", "notify-send ram")]}})
    settings(tmp_path, ".claude/settings.json", {"hooks": {"PreToolUse": [group("Bash", "./guard.sh", timeout=5)]}})
    settings(tmp_path, ".claude/settings.local.json", {"hooks": {"Stop": [group("", "echo done")]}})
    settings(tmp_path, ".agents/settings.json", {"hooks": {"PostToolUse": [group("Edit|Write", "fmt")]}})
    loaded = load_command_hooks(tmp_path, os.environ, trust=None)
    assert loaded.warnings == []
    assert [(h.event, h.matcher, h.command, h.timeout, h.source, h.project) for h in loaded.hooks] == [
        ("Notification", "", "notify-send ram", 60.0, str(user_file()), False),
        ("PreToolUse", "Bash", "./guard.sh", 5.0, ".claude/settings.json", True),
        ("Stop", "", "echo done", 60.0, ".claude/settings.local.json", True),
        ("PostToolUse", "Edit|Write", "fmt", 60.0, ".agents/settings.json", True),
    ]
    line = project_hooks_line(loaded.hooks)
    assert line is not None
    assert line.startswith(".claude/settings.json, .claude/settings.local.json, .agents/settings.json defines 3 hook")
    assert "outside the sandbox" in line and "PreToolUse(Bash), Stop, PostToolUse(Edit|Write)" in line
    assert project_hooks_line(loaded.hooks[:1]) is None  # the user's own hooks need no announcement
    only_user = load_command_hooks(tmp_path, os.environ, sources=("user",), trust=None)
    assert [h.command for h in only_user.hooks] == ["notify-send ram"]


def test_a_broken_part_costs_one_warning_and_the_rest_loads(tmp_path: Path) -> None:
    hooks = {
        "PreToolUse": [
            group("Bash", "ok-1"),
            {"matcher": "Bash", "hooks": [{"type": "prompt", "prompt": "is this safe?"}, {"type": "command"}]},
            "not a group",
            {"matcher": 3, "hooks": [{"command": "x"}]},
        ],
        "BeforeEverything": [group("", "x")],
        "Stop": {"hooks": []},
        "PostToolUse": [group("", "ok-2", timeout=-1)],
    }
    settings(tmp_path, ".claude/settings.json", {"hooks": hooks})
    loaded = load_command_hooks(tmp_path, os.environ, trust=None)
    assert [h.command for h in loaded.hooks] == ["ok-1", "ok-2"]
    assert loaded.hooks[1].timeout == 60.0
    where = ".claude/settings.json: `hooks."
    assert loaded.warnings == [
        f"{where}PreToolUse[1]`.hooks[0]: ram runs only `type: \"command\"` hooks, not 'prompt' (ignored)",
        f"{where}PreToolUse[1]`.hooks[1]: `command` must be a non-empty string (ignored)",
        f"{where}PreToolUse[2]` must be an object with a `hooks` list (ignored)",
        f"{where}PreToolUse[3]`: `matcher` must be a string (ignored)",
        ".claude/settings.json: ram has no 'BeforeEverything' hook event; those hooks are ignored",
        f"{where}Stop` must be a list of matcher groups (ignored)",
        f"{where}PostToolUse[0]`.hooks[0]: `timeout` must be a positive number of seconds; 60 is used",
    ]


def test_disable_all_hooks_counts_only_from_the_user(tmp_path: Path) -> None:
    settings(tmp_path, ".claude/settings.json", {"hooks": {"Stop": [group("", "echo")]}, "disableAllHooks": True})
    loaded = load_command_hooks(tmp_path, os.environ, trust=None)
    assert [h.command for h in loaded.hooks] == ["echo"]
    assert loaded.warnings == [
        ".claude/settings.json: `disableAllHooks` is accepted only from the user settings (ignored)"
    ]
    settings(user_file().parent, "settings.json", {"disableAllHooks": True})
    assert load_command_hooks(tmp_path, os.environ, trust=None).hooks == []


def test_flag_settings_bring_hooks_too(tmp_path: Path) -> None:
    given = json.dumps({"hooks": {"SessionEnd": [group("", "echo bye")]}})
    loaded = load_command_hooks(tmp_path, os.environ, flag_settings=given, trust=None)
    assert [(h.event, h.source, h.project) for h in loaded.hooks] == [("SessionEnd", "--settings", False)]


# ---- what a hook's exit code and output mean ----


@pytest.mark.parametrize(
    ("event", "finished", "expected"),
    [
        ("PreToolUse", Finished(0, "", ""), HookOutput()),
        ("PreToolUse", Finished(0, "formatted ok\n", ""), HookOutput()),  # only Claude Code's transcript shows it
        ("UserPromptSubmit", Finished(0, "today is Monday\n", ""), HookOutput(additional_context="today is Monday")),
        ("SessionStart", Finished(0, "branch main\n", ""), HookOutput(additional_context="branch main")),
        (
            "PreToolUse",
            Finished(0, '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}', ""),
            HookOutput(permission="deny", permission_reason="no"),
        ),
        ("PreToolUse", Finished(2, "", "rm is forbidden\n"), HookOutput(block=True, reason="rm is forbidden")),
        ("PostToolUse", Finished(2, "", "lint failed"), HookOutput(block=True, reason="lint failed")),
        ("Stop", Finished(2, '{"decision": "approve"}', "tests first"), HookOutput(block=True, reason="tests first")),
        ("UserPromptSubmit", Finished(2, "", "no secrets"), HookOutput(block=True, reason="no secrets")),
        ("Notification", Finished(2, "", "shown only"), HookOutput(system_message="Notification hook `h`: shown only")),
        ("PreCompact", Finished(2, "", ""), HookOutput()),
        (
            "PreToolUse",
            Finished(127, "", "sh: 1: guard: not found\nmore\n"),
            HookOutput(system_message="warning: PreToolUse hook `h` exited with 127: sh: 1: guard: not found"),
        ),
        ("Stop", Finished(1, "", ""), HookOutput(system_message="warning: Stop hook `h` exited with 1")),
    ],
)
def test_exit_codes_and_output_read_as_claude_code_does(event: str, finished: Finished, expected: HookOutput) -> None:
    assert read_answer(event, "hook `h`", finished) == expected  # type: ignore[arg-type]


# ---- real commands ----


def hooks_of(tmp_path: Path, data: dict[str, object]) -> Hooks:
    settings(tmp_path, ".claude/settings.json", {"hooks": data})
    loaded = load_command_hooks(tmp_path, os.environ, trust=None)
    assert loaded.warnings == []
    env = {"PATH": os.environ["PATH"], "OPENAI_API_KEY": "sk-secret"}
    hooks = Hooks(
        [hook_entry(spec, tmp_path, lambda: {k: v for k, v in env.items() if k != "OPENAI_API_KEY"})
         for spec in loaded.hooks],
        base=lambda: {"session_id": "s-1", "cwd": str(tmp_path)},
    )  # fmt: skip
    return hooks


async def test_a_command_gets_the_event_json_on_stdin_and_its_environment(tmp_path: Path) -> None:
    script = tmp_path / "record.sh"
    script.write_text('#!/bin/sh\ncat > "$CLAUDE_PROJECT_DIR/seen.json"\nenv > "$CLAUDE_PROJECT_DIR/env.txt"\n')
    script.chmod(0o755)
    hooks = hooks_of(tmp_path, {"PreToolUse": [group("Bash", '"$CLAUDE_PROJECT_DIR"/record.sh')]})
    verdict = await hooks.run(
        "PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "ls"}, "tool_use_id": "t1"}, "Bash"
    )
    assert verdict.ran == 1 and verdict.messages == [] and not verdict.block
    assert json.loads((tmp_path / "seen.json").read_text()) == {
        "session_id": "s-1",
        "cwd": str(tmp_path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "ls"},
        "tool_use_id": "t1",
    }
    env = (tmp_path / "env.txt").read_text()
    assert f"CLAUDE_PROJECT_DIR={tmp_path}\n" in env and "sk-secret" not in env
    assert not (await hooks.run("PreToolUse", {"tool_name": "Read"}, "Read")).ran  # the matcher is Bash


async def test_exit_2_blocks_with_stderr_and_json_on_stdout_is_hook_output(tmp_path: Path) -> None:
    rewrite = json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -la"}}})
    hooks = hooks_of(
        tmp_path,
        {
            "PreToolUse": [group("Bash", "echo 'no rm here' >&2; exit 2")],
            "PostToolUse": [group("", f"echo '{rewrite}'")],
        },
    )
    blocked = await hooks.run("PreToolUse", {"tool_name": "Bash"}, "Bash")
    assert blocked.block and blocked.reasons == ["no rm here"]
    rewritten = await hooks.run("PostToolUse", {"tool_name": "Bash"}, "Bash")
    assert rewritten.updated_input == {"command": "ls -la"} and not rewritten.block


async def test_a_hung_hook_is_killed_with_its_process_group_at_its_timeout(tmp_path: Path) -> None:
    marker = f"ram-hung-hook-{os.getpid()}"
    command = textwrap.dedent(f"""\
        (exec -a {marker}-child sleep 1000) &
        echo started > "$CLAUDE_PROJECT_DIR/started"
        exec -a {marker}-main sleep 1001
    """)
    (tmp_path / "hang.sh").write_text(command)
    hooks = hooks_of(tmp_path, {"Stop": [group("", "bash hang.sh", timeout=1)]})
    verdict = await hooks.run("Stop", {"stop_hook_active": False})
    assert (tmp_path / "started").exists()
    assert verdict.messages == ["warning: Stop hook `bash hang.sh` took longer than 1 s and was stopped"]
    assert not verdict.block
    assert wait_until(lambda: not pids_with(marker)), pids_with(marker)  # the script and the child it started


async def test_a_hook_that_cannot_run_costs_one_warning(tmp_path: Path) -> None:
    hooks = hooks_of(tmp_path, {"UserPromptSubmit": [group("", "./no-such-hook.sh")]})
    verdict = await hooks.run("UserPromptSubmit", {"prompt": "hi"})
    assert len(verdict.messages) == 1 and not verdict.block and not verdict.context
    assert verdict.messages[0].startswith("warning: UserPromptSubmit hook `./no-such-hook.sh` exited with 127: ")


def test_command_hook_specs_are_plain_values() -> None:
    assert CommandHook("Stop", "x") == CommandHook("Stop", "x", "", 60.0, "", False)
