"""Issue 15 end to end: `ram` as a subprocess, a scripted model sending the commands an attacker would, real bash
running what is allowed. The escapes are denied by the deny rules even in bypassPermissions; the over-asks run
without asking in a headless default-mode run."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for, ram


def _bash(command: str) -> ToolCall:
    return ToolCall("Bash", {"command": command})


def _results(server: FakeLLMServer) -> list[str]:
    return [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"]


def _workspace(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.txt").write_text("token=hunter2\n")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("print('hi')\n")
    return tmp_path


ESCAPES = [
    "grep --rec token .",
    "grep --dir=rec token .",
    "grep -d rec token .",
    "grep --der token .",
    "diff --recur . src",
    "cat {secrets,nope}/key.txt",
    "cat ~+/secrets/key.txt",
    "sh -c 'cat secrets/key.txt'",
    "timeout 5 grep -r token .",
]


def test_the_escapes_are_denied_even_in_bypass_permissions(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    fake_llm.enqueue(Reply(tool_calls=[_bash(c) for c in ESCAPES]), Reply(text="done"))
    proc = ram(
        "--permission-mode", "bypassPermissions", "--disallowed-tools", "Read(./secrets/**)", "look",
        env=env_for("openai", fake_llm), cwd=root,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    results = _results(fake_llm)
    assert len(results) == len(ESCAPES)
    for command, result in zip(ESCAPES, results, strict=True):
        assert "hunter2" not in result, command
        assert result.startswith("Error: ") and "Read(./secrets/**)" in result, (command, result)


def test_the_over_asks_run_unasked_and_a_quoted_argument_is_not_a_command(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    root = _workspace(tmp_path)
    commands = [
        "base64 src/app.py",
        "printf 1000000 | numfmt --to=iec",
        "printf 'a\\nb\\n' | tac",
        "expr 2 \\* 3",
        "printf 'a\\nb\\n' | paste -sd,",
        "echo abc | rev",
        "echo 'rm -rf x'",
    ]
    fake_llm.enqueue(Reply(tool_calls=[_bash(c) for c in commands]), Reply(text="done"))
    proc = ram("--disallowed-tools", "Bash(rm:*)", "go", env=env_for("openai", fake_llm), cwd=root)
    assert proc.returncode == 0, proc.stderr
    b64, numfmt, tac, expr, paste, rev, echo = _results(fake_llm)
    assert b64.strip() == "cHJpbnQoJ2hpJykK"
    assert numfmt.strip() == "977K"
    assert tac.split() == ["b", "a"]
    assert expr.strip() == "6"
    assert paste.strip() == "a,b"
    assert rev.strip() == "cba"
    assert echo.strip() == "rm -rf x"


def test_network_and_writes_through_options_are_asked_for(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    commands = ["git remote show origin", "sort --outp=out src/app.py", "sed --in-pl s/hi/ho/ src/app.py"]
    fake_llm.enqueue(Reply(tool_calls=[_bash(c) for c in commands]), Reply(text="done"))
    proc = ram("go", env=env_for("openai", fake_llm), cwd=root)
    assert proc.returncode == 0, proc.stderr
    for command, result in zip(commands, _results(fake_llm), strict=True):
        assert result.startswith("Error: ") and "needs approval" in result, (command, result)
    assert not (root / "out").exists()
    assert (root / "src" / "app.py").read_text() == "print('hi')\n"
