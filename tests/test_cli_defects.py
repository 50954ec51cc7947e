"""Defects of issue 12 found from the command line, each tested as a user meets it: the CLI as a subprocess (or
the REPL in a pty), the loopback fake LLM server as the model, real files.

- A settings file that cannot be read or understood fails closed (item 10).
- Headless denials say how to allow them, in full once and in a summary at the end (item 16).
- `git diff | ram "review this"` reads the piped text, without waiting on a pipe nobody writes to (item 17).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from .test_cli import assert_no_traceback, env_for, ram
from .ui.test_repl_pty import ram_term

# ---------------------------------------------------------------- item 10: broken settings fail closed

MISSING_COMMA = '{\n  "permissions": {\n    "deny": ["Bash(rm:*)"]\n    "allow": []\n  }\n}\n'
"""A deny rule, then a syntax error at line 4, column 5 (no comma after the deny list)."""


def bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command})


def user_settings() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"


@pytest.mark.parametrize(
    ("where", "content", "expected"),
    [
        (".claude/settings.json", MISSING_COMMA, ".claude/settings.json line 4, column 5: Expecting ',' delimiter"),
        ("user", '{"permissions": {"deny": ["Bash(rm:*)",]}}', "line 1, column 40: Expecting value"),
        (".agents/settings.json", '{"permissions": {"deny": "Bash(rm:*)"}}', "`permissions.deny` must be a list"),
        (".claude/settings.local.json", '{"permissions": {"deny": ["Bash(rm:*"]}}', "the deny rule 'Bash(rm:*'"),
    ],
)
def test_a_settings_file_that_cannot_be_understood_stops_a_headless_run_before_the_model(
    fake_llm: FakeLLMServer, tmp_path: Path, where: str, content: str, expected: str
) -> None:
    path = user_settings() if where == "user" else tmp_path / where
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    (tmp_path / "keep.txt").write_text("precious")
    fake_llm.enqueue(Reply(tool_calls=[bash("rm -f keep.txt")]), Reply(text="removed"))
    # ALLOW_WRITE=1 would let the rm through if the deny rule were dropped
    proc = ram("clean up", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 2, proc.stderr
    assert fake_llm.requests == []  # no model call at all
    assert (tmp_path / "keep.txt").read_text() == "precious"
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and expected in errors[0], proc.stderr
    assert "fix it or move it away" in errors[0]
    if where == "user":
        assert str(path) in errors[0]
    assert proc.stdout == ""


def test_in_the_repl_a_broken_settings_file_asks_for_every_call_until_it_is_fixed(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    settings = tmp_path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(MISSING_COMMA)
    (tmp_path / "notes.txt").write_text("hello\n")
    (tmp_path / "more.txt").write_text("world\n")
    (tmp_path / "keep.txt").write_text("precious")
    fake_llm.enqueue(
        # reading inside the workspace: normally allowed, asked for while the file is broken
        Reply(tool_calls=[ToolCall("Read", {"file_path": "notes.txt"})]),
        Reply(text="read it once"),
        # after the fix: the read runs without asking, and the file's deny rule applies
        Reply(tool_calls=[ToolCall("Read", {"file_path": "more.txt"}), bash("rm -f keep.txt")]),
        Reply(text="second turn over"),
    )
    # ALLOW_WRITE=1 and bypassPermissions would allow everything: while the file is broken, nothing is
    with ram_term(fake_llm, tmp_path, "--permission-mode", "bypassPermissions", ALLOW_WRITE="1") as term:
        shown = term.expect("every tool call is asked for")
        assert "error: .claude/settings.json line 4, column 5: Expecting ',' delimiter" in shown
        term.prompt()
        term.line("read the notes")
        asked = term.expect("Allow? [y/a/N]")
        assert "Read notes.txt" in asked and ".claude/settings.json could not be understood" in asked
        term.send("y")
        term.expect("read it once")
        term.prompt()
        settings.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}))
        term.line("again")
        after = term.expect("second turn over")
        assert "permission settings read again" in after
        assert "Allow? [y/a/N]" not in after
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert "Traceback" not in term.text
    assert (tmp_path / "keep.txt").read_text() == "precious"
    results = [m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "hello" in results[0] and "world" in results[1] and "deny rule Bash(rm:*)" in results[2]


# ---------------------------------------------------------------- item 16: headless denials are explained


def write(path: str, content: str) -> ToolCall:
    return ToolCall("Write", {"file_path": path, "content": content})


def test_headless_denials_show_the_whole_hint_once_and_a_summary_with_the_rules_to_rerun_with(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "keep.txt").write_text("precious")
    calls = [write("new.txt", "x\n"), bash("rm -f keep.txt"), bash("git init -q repo")]
    fake_llm.enqueue(Reply(tool_calls=calls), Reply(text="I could not do it."))
    proc = ram("tidy up", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "I could not do it.\n"  # stdout holds the answer only
    lines = proc.stderr.splitlines()
    denied = [line for line in lines if line.startswith("[tool] ") and " denied — " in line]
    assert len(denied) == 3, proc.stderr
    assert denied[0].startswith("[tool] Write denied — Write new.txt needs approval")
    assert denied[0].endswith("or add an allow rule to .agents/settings.json.")  # the whole hint, not cut
    assert denied[1:] == [  # later ones: what was denied and why, in one short line each
        "[tool] Bash denied — Run: rm -f keep.txt needs approval (`rm -f keep.txt` may change files or run programs), "
        "and headless mode cannot ask.",
        "[tool] Bash denied — Run: git init -q repo needs approval (`git init -q repo` may change files or run "
        "programs), and headless mode cannot ask.",
    ]
    rules = "Edit(./new.txt),Bash(rm:*),Bash(git init:*)"
    assert lines[-1] == f'3 actions were denied — rerun with ALLOW_WRITE=1 or --allowed-tools "{rules}"'

    # the rules it suggests do allow exactly those calls
    fake_llm.enqueue(Reply(tool_calls=calls), Reply(text="done"))
    again = ram("--allowed-tools", rules, "tidy up", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert " denied" not in again.stderr
    assert (tmp_path / "new.txt").read_text() == "x\n" and not (tmp_path / "keep.txt").exists()
    assert (tmp_path / "repo" / ".git").is_dir()


def test_the_summary_names_only_flags_that_would_allow_the_calls_and_json_output_is_unchanged(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    calls = [write("new.txt", "x\n"), bash("rm -f keep.txt")]
    fake_llm.enqueue(Reply(tool_calls=calls), Reply(text="no"))
    args = ("--disallowed-tools", "Bash(rm:*)", "tidy up")
    proc = ram(*args, env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.splitlines()[-1]
    fix = 'rerun with ALLOW_WRITE=1 or --allowed-tools "Edit(./new.txt)" to allow 1 of them'
    assert last == f"2 actions were denied — {fix}"

    # neither alone allows both: ALLOW_WRITE=1 for the write, a rule for the read outside the workspace
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("far away\n")
    mixed = [ToolCall("Read", {"file_path": str(outside)}), bash("echo x > 'out*.txt'")]
    fake_llm.enqueue(Reply(tool_calls=mixed), Reply(text="no"))
    proc = ram("go", env=env_for("openai", fake_llm), cwd=tmp_path)
    fix = f'rerun with ALLOW_WRITE=1 --allowed-tools "Read(/{outside})"'
    assert proc.stderr.splitlines()[-1] == f"2 actions were denied — {fix}"

    fake_llm.enqueue(Reply(tool_calls=[write("new.txt", "x\n")]), Reply(text="no"))
    proc = ram("--permission-mode", "plan", "go", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
    nothing = "no --allowed-tools rule or ALLOW_WRITE=1 would allow it"
    assert proc.stderr.splitlines()[-1] == f"1 action was denied (see above); {nothing}"

    fake_llm.enqueue(Reply(tool_calls=calls), Reply(text="no"))
    proc = ram("--output-format", "json", *args, env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert [d["tool_name"] for d in result["permission_denials"]] == ["Write", "Bash"]
    assert "actions were denied" not in proc.stderr


# ---------------------------------------------------------------- item 17: piped text with a task argument

DIFF = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n"


def user_text(server: FakeLLMServer) -> str:
    content = server.requests[0].body["messages"][-1]["content"]
    assert isinstance(content, str)
    return content


def test_text_piped_to_a_task_is_sent_after_it(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="looks fine"))
    proc = ram("review this change", env=env_for("openai", fake_llm), cwd=tmp_path, stdin=DIFF)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "looks fine\n"
    assert user_text(fake_llm) == "review this change\n\n" + DIFF.strip()


def test_a_file_on_stdin_is_read_and_dev_null_gives_nothing(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "change.diff").write_text(DIFF)
    fake_llm.enqueue(Reply(text="one"), Reply(text="two"))
    env = env_for("openai", fake_llm)
    for source in (tmp_path / "change.diff", Path(os.devnull)):
        with source.open("rb") as stdin:
            proc = subprocess.run(
                [sys.executable, "-m", "react_agent_mini", "review"],
                env=env,
                cwd=tmp_path,
                stdin=stdin,
                capture_output=True,
                text=True,
                timeout=120,
            )
        assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    sent = [r.body["messages"][-1]["content"] for r in fake_llm.requests]
    assert sent == ["review\n\n" + DIFF.strip(), "review"]


def test_an_open_pipe_that_never_speaks_does_not_hold_the_run(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="done without stdin"))
    # stdin inherited from a parent that never writes and never closes it (a CI runner, a supervisor)
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent_mini", "summarise the repo"],
        env=env_for("openai", fake_llm),
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.wait(timeout=120) == 0
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
    finally:
        proc.kill()
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait()
    assert out == "done without stdin\n"
    assert user_text(fake_llm) == "summarise the repo"
    assert "nothing arrived on stdin" in err and "-p" in err, err
