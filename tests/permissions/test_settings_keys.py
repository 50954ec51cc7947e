"""A misspelt key in a settings file is never dropped in silence (`permissions.settings.check_keys`), end to end
through the `ram` CLI against the loopback fake model.

Inside `permissions` an unknown key fails closed as a deny rule that does not parse does (`"dney"` may hold the
deny rules the user counts on): the headless run exits 2 naming the file and the key before any model call. At the
top level, and inside hooks, it is a warning naming the key and the file. A near miss says which key was meant.
Claude Code's own keys that ram does not use are no misspelling: silent in `.claude/` files, named once in ram's.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram


def settings(root: Path, data: dict[str, Any], name: str = ".claude/settings.json") -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))
    return path


def warnings_of(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("warning:")]


@pytest.mark.parametrize(
    ("block", "key", "meant"),
    [
        ({"dney": ["Write"]}, "dney", "deny"),
        ({"alow": ["Write"]}, "alow", "allow"),
        ({"Deny": ["Read(./secrets/**)"]}, "Deny", "deny"),
        ({"deny": [], "askk": ["Bash(git push:*)"]}, "askk", "ask"),
    ],
)
def test_an_unknown_key_in_permissions_stops_a_headless_run_naming_file_and_key(
    block: dict[str, Any], key: str, meant: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    settings(tmp_path, {"permissions": block})
    proc = ram("write a file", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert errors[0].startswith(f"error: .claude/settings.json: unknown key `permissions.{key}`")
    assert f"(did you mean `{meant}`?)" in errors[0]
    assert fake_llm.requests == []  # nothing ran: the rules the file holds are unknown


def test_the_same_key_from_the_flag_fails_closed_too(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    proc = ram(
        "--settings", '{"permissions": {"dney": ["Write"]}}', "hi", env=env_for("openai", fake_llm), cwd=tmp_path
    )
    assert proc.returncode == 2
    assert "error: --settings: unknown key `permissions.dney` (did you mean `deny`?)" in proc.stderr
    assert fake_llm.requests == []


def test_a_misspelt_top_level_key_is_one_warning_with_the_key_meant(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    settings(tmp_path, {"permisions": {"deny": ["Write"]}}, ".agents/settings.json")
    fake_llm.enqueue(Reply(text="done"))
    proc = ram("hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert warnings_of(proc.stderr) == [
        "warning: .agents/settings.json: unknown key `permisions` (did you mean `permissions`?); ram ignores it"
    ]


def test_claude_codes_own_keys_are_silent_in_its_files_and_named_once_in_rams(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    claude_code = {
        "$schema": "https://json.schemastore.org/claude-code-settings.json",
        "env": {"FOO": "1"},
        "model": "opus",
        "statusLine": {"type": "command", "command": "echo hi"},
        "includeCoAuthoredBy": False,
        "permissions": {"deny": ["Bash(rm:*)"]},
    }
    settings(tmp_path, claude_code)
    fake_llm.enqueue(Reply(text="done"))
    quiet = ram("hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert quiet.returncode == 0, quiet.stderr
    assert warnings_of(quiet.stderr) == []

    (tmp_path / ".claude" / "settings.json").unlink()
    settings(tmp_path, claude_code, ".agents/settings.json")
    fake_llm.enqueue(Reply(text="done"))
    named = ram("hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert named.returncode == 0, named.stderr
    assert warnings_of(named.stderr) == [
        "warning: .agents/settings.json: ram ignores Claude Code's `env`, `model`, `statusLine`, `includeCoAuthoredBy`"
    ]


def test_claude_codes_permission_keys_ram_does_not_use_only_warn(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    settings(
        tmp_path,
        {"permissions": {"deny": ["Read(./notes.txt)"], "additionalDirectories": ["../other"]}},
    )
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]), Reply(text="done"))
    proc = ram("read it", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (
        "warning: .claude/settings.json: ram does not use Claude Code's `permissions.additionalDirectories` (ignored)"
        in proc.stderr
    )
    result = json.dumps(fake_llm.requests[-1].body["messages"][-1])
    assert "hello" not in result  # the file's deny rule still applied


def test_an_unknown_key_in_a_hook_is_named_with_the_key_meant(fake_llm: FakeLLMServer, trusted: Path) -> None:
    hook = {"type": "command", "command": "true", "timout": 5, "async": True}
    settings(trusted, {"hooks": {"PreToolUse": [{"matchr": "Echo", "hooks": [hook]}]}})
    fake_llm.enqueue(Reply(text="done"))
    proc = ram("hi", env=env_for("openai", fake_llm), cwd=trusted)
    assert proc.returncode == 0, proc.stderr
    assert [line for line in warnings_of(proc.stderr) if "hooks.PreToolUse" in line] == [
        "warning: .claude/settings.json: `hooks.PreToolUse[0]`: unknown key `matchr` (did you mean `matcher`?) "
        "(ignored)",
        "warning: .claude/settings.json: `hooks.PreToolUse[0]`.hooks[0]: unknown key `timout` (did you mean "
        "`timeout`?) (ignored)",
        "warning: .claude/settings.json: `hooks.PreToolUse[0]`.hooks[0]: ram ignores Claude Code's `async`",
    ]


def test_an_unknown_key_given_with_the_flag_is_named(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="done"))
    proc = ram("--settings", '{"hoooks": {}, "env": {}}', "hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert warnings_of(proc.stderr) == [
        "warning: --settings: ram applies only `permissions` and `hooks`; ignored: env",
        "warning: --settings: unknown key `hoooks` (did you mean `hooks`?); ram ignores it",
    ]
