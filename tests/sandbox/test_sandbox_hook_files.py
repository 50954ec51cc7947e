"""The files the user's own hooks run stay read-only to sandboxed commands: a hook runs outside the sandbox, so a
command that could append to `scripts/fmt.sh` (run by a PostToolUse hook) or rewrite the `Makefile` (run by a Stop
hook's `make -s lint`) would run its code on the host. End to end through `ram` headless against the fake model,
with the real bwrap sandbox; and `hooks.command.files.named_paths`, the pure function that finds those files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from react_agent_mini.hooks.command.config import CommandHook
from react_agent_mini.hooks.command.files import hook_files, named_paths, run_paths
from react_agent_mini.sandbox import bwrap

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram

BYPASS = ("--permission-mode", "bypassPermissions")
FMT = "#!/bin/sh\necho formatted >> hook-ran.log\n"
MAKEFILE = "lint:\n\t@echo linted >> hook-ran.log\n"
_FOUND = bwrap.find_bwrap(os.environ, network=False)
needs_bwrap = pytest.mark.skipif(
    _FOUND.binary is None, reason=f"bwrap cannot run here, so there is no sandbox to test: {_FOUND.problem}"
)


def user_hooks(hooks: dict[str, object]) -> None:
    """The user's own settings file (tests get their own XDG_CONFIG_HOME): hooks that need no trust."""
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"hooks": hooks}))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "fmt.sh").write_text(FMT)
    (root / "Makefile").write_text(MAKEFILE)
    user_hooks(
        {
            "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "sh scripts/fmt.sh"}]}],
            "Stop": [{"hooks": [{"type": "command", "command": "make -s lint"}]}],
        }
    )
    return root


ATTACKS = [
    "echo 'touch pwned' >> scripts/fmt.sh",
    "printf 'lint:\\n\\ttouch pwned\\n' > Makefile",
    "mv scripts scripts-old && mkdir scripts && echo 'touch pwned' > scripts/fmt.sh",
    "rm -f Makefile; printf 'lint:\\n\\ttouch pwned\\n' > GNUmakefile",
]


def run(fake_llm: FakeLLMServer, ws: Path, command: str, *flags: str) -> str:
    """One session whose model runs `command` with Bash (made to succeed, so that PostToolUse hooks run); the
    tool result."""
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": f"{command}; true"})]), Reply(text="done"))
    proc = ram(*BYPASS, *flags, "go", env=env_for("openai", fake_llm), cwd=ws)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    return str([m for m in fake_llm.requests[-1].body["messages"] if m["role"] == "tool"][-1]["content"])


@needs_bwrap
@pytest.mark.parametrize("command", ATTACKS)
def test_a_sandboxed_command_cannot_change_what_a_hook_runs(fake_llm: FakeLLMServer, ws: Path, command: str) -> None:
    result = run(fake_llm, ws, command)
    assert not (ws / "pwned").exists()
    assert (ws / "scripts" / "fmt.sh").read_text() == FMT and (ws / "Makefile").read_text() == MAKEFILE
    assert not (ws / "scripts-old").exists()
    walls = ("Read-only file system", "Device or resource busy", "moved to GNUmakefile.sandbox-blocked")
    assert any(wall in result for wall in walls), result
    assert not (ws / "GNUmakefile").exists()  # make would read it first: created, it is moved aside
    assert (ws / "hook-ran.log").read_text() == "formatted\nlinted\n"  # both hooks ran, as the user wrote them


def test_with_the_sandbox_off_the_command_reaches_the_hooks_script(fake_llm: FakeLLMServer, ws: Path) -> None:
    """What the walls above stop: without them the hook runs the command's code (so the test can fail)."""
    run(fake_llm, ws, ATTACKS[0], "--sandbox", "off")
    assert (ws / "pwned").exists()


@needs_bwrap
def test_the_rest_of_the_workspace_stays_writable(fake_llm: FakeLLMServer, ws: Path) -> None:
    result = run(fake_llm, ws, "echo ok > scripts/other.sh && echo new > notes.txt && cat notes.txt")
    assert result == "new" and (ws / "scripts" / "other.sh").read_text() == "ok\n"


# --- which files a hook command names -------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for name in ("scripts/fmt.sh", ".claude/hooks/check.py", "tools/__init__.py", "tools/fmt.py", "package.json",
                 "mk/rules.mk", "sub/Makefile", "lib/x.js", "we ird/a b.sh"):  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    (root / "Makefile").write_text("include mk/rules.mk\n-include $(CONFIG).mk\nlint:\n\ttrue\n")
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / ".venv" / "bin" / "ruff").write_text("#!/bin/sh\n")
    (root / ".venv" / "bin" / "ruff").chmod(0o755)
    (tmp_path / "outside.sh").write_text("x\n")
    return root


CASES = [
    ("sh scripts/fmt.sh", ["scripts/fmt.sh"]),
    ('"$CLAUDE_PROJECT_DIR"/.claude/hooks/check.py', [".claude/hooks/check.py"]),
    ("python3 ${CLAUDE_PROJECT_DIR}/.claude/hooks/check.py --strict", [".claude/hooks/check.py"]),
    ("make -s lint", ["Makefile", "mk/rules.mk"]),
    ("make -C sub test", ["sub", "sub/Makefile"]),
    ("python -m tools.fmt", ["tools"]),
    ("ruff format . && ruff check", [".venv/bin/ruff"]),
    ("npm run lint --silent", ["package.json"]),
    ("node lib/x.js | tee /dev/null", ["lib/x.js"]),
    ("bash -c 'sh scripts/*.sh; echo done' 2>/dev/null", ["scripts/fmt.sh"]),
    ("cd scripts && ./fmt.sh", ["scripts"]),
    ("sh 'we ird/a b.sh'", ["we ird/a b.sh"]),
    ("sh ../outside.sh; echo $CLAUDE_PROJECT_DIR", []),
    ("echo 'unbalanced", []),
]


@pytest.mark.parametrize(("command", "expected"), CASES, ids=[c for c, _ in CASES])
def test_the_workspace_files_a_hook_command_names(tree: Path, command: str, expected: list[str]) -> None:
    env = {"PATH": f"{tree / '.venv' / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin", "HOME": str(tree.parent)}
    assert [p.relative_to(tree).as_posix() for p in named_paths(command, tree, env)] == sorted(expected)


RUNS = [
    ("make -s lint", ["GNUmakefile", "Makefile", "makefile", "mk/rules.mk"]),
    ("make -f build.mk", ["build.mk"]),
    ("sh scripts/not-yet.sh --fix", ["scripts/not-yet.sh"]),
    ('"$CLAUDE_PROJECT_DIR"/.claude/hooks/new.py', [".claude/hooks/new.py"]),
    ("python3 -u tools/fmt.py", ["tools/fmt.py"]),
    ("python -m black .", ["black", "black.py"]),
    ("python -c 'print(1)'; bash -c 'echo hi'", []),
    ("sh ../outside.sh", []),
]


@pytest.mark.parametrize(("command", "expected"), RUNS, ids=[c for c, _ in RUNS])
def test_what_a_hook_command_would_run_there_or_not(tree: Path, command: str, expected: list[str]) -> None:
    found = run_paths(command, tree, {"PATH": "/usr/bin"})
    assert [p.relative_to(tree).as_posix() for p in found] == sorted(expected)


def test_every_hooks_files_once(tree: Path) -> None:
    hooks = [CommandHook("PostToolUse", "sh scripts/fmt.sh"), CommandHook("Stop", "sh ./scripts/fmt.sh && make")]
    assert [p.relative_to(tree).as_posix() for p in hook_files(hooks, tree, {"PATH": "/usr/bin"})] == [
        "GNUmakefile", "Makefile", "makefile", "mk/rules.mk", "scripts/fmt.sh"
    ]  # fmt: skip
