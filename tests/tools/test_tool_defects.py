"""Tool defects of issue 12, end to end: Write/Edit on things that are not regular files (4), Grep and Glob when
rg's stdin is a regular file (5), background processes that outlive ram (8), and commands that could read ram's
credentials (11). Real files, FIFOs, sockets and devices, the CLI as a subprocess against the loopback fake LLM."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini.tools.base import ToolContext, ToolOutput
from react_agent_mini.tools.builtin.edit import EditTool
from react_agent_mini.tools.builtin.read import ReadTool
from react_agent_mini.tools.builtin.write import WriteTool

from ..fakes.fake_llm import FakeLLMServer, Hang, RecordedRequest, Reply, ToolCall
from ..processes import pids_with
from ..test_cli import WIRES, assert_no_traceback, env_for, ram


def tool_results(request: RecordedRequest) -> list[str]:
    """The text of every tool result in a recorded request, in order, on either wire."""
    out: list[str] = []
    for message in request.body["messages"]:
        if message["role"] == "tool":
            out.append(message["content"])
        elif message["role"] == "user" and isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    content = block["content"]
                    text = content if isinstance(content, str) else "".join(b.get("text", "") for b in content)
                    out.append(("Error: " if block.get("is_error") else "") + text)
    return out


def bash(command: str, **extra: Any) -> ToolCall:
    return ToolCall("Bash", {"command": command, **extra})


# --- 4: Write and Edit refuse what is not a regular file, and never replace it -------------------------------


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[Path]:
    """A workspace holding a FIFO, a listening unix socket, a symlink to /dev/null and a symlink to a file."""
    os.mkfifo(tmp_path / "fifo")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock"))
    (tmp_path / "devnull").symlink_to("/dev/null")
    (tmp_path / "target.txt").write_text("old\n")
    (tmp_path / "link.txt").symlink_to("target.txt")
    try:
        yield tmp_path
    finally:
        server.close()


def assert_specials_intact(root: Path) -> None:
    assert stat.S_ISFIFO((root / "fifo").lstat().st_mode)
    assert stat.S_ISSOCK((root / "sock").lstat().st_mode)
    assert os.readlink(root / "devnull") == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null was replaced"


REFUSED = {
    "fifo": "fifo is a FIFO (named pipe), not a regular file",
    "sock": "sock is a socket, not a regular file",
    "devnull": "/dev/null is a character device, not a regular file",
}


async def test_write_and_edit_refuse_fifos_sockets_and_devices_and_write_through_file_links(specials: Path) -> None:
    ctx = ToolContext(cwd=specials)
    write, edit = WriteTool(), EditTool()
    for name, refused in REFUSED.items():
        for out in (
            await write.call(write.validate({"file_path": name, "content": "x"}), ctx),
            await edit.call(edit.validate({"file_path": name, "old_string": "", "new_string": "x"}), ctx),
            await edit.call(edit.validate({"file_path": name, "old_string": "a", "new_string": "b"}), ctx),
        ):
            assert out.is_error and out.content.startswith(refused + ";"), out
    assert_specials_intact(specials)
    # A symlink to a regular file in the workspace: the target is written, and the link stays a link.
    read = ReadTool()
    assert not (await read.call(read.validate({"file_path": "link.txt"}), ctx)).is_error
    out = await write.call(write.validate({"file_path": "link.txt", "content": "new\n"}), ctx)
    assert out == ToolOutput("Updated target.txt (1 line).")
    out = await edit.call(edit.validate({"file_path": "link.txt", "old_string": "new", "new_string": "newer"}), ctx)
    assert out.content.startswith("Edited target.txt (1 replacement).")
    assert os.readlink(specials / "link.txt") == "target.txt"
    assert (specials / "target.txt").read_text() == "newer\n"


@pytest.mark.parametrize("allow", ["ALLOW_WRITE=1", "--permission-mode bypassPermissions"])
def test_write_and_edit_through_the_cli_leave_special_files_alone(
    allow: str, fake_llm: FakeLLMServer, specials: Path
) -> None:
    calls = [ToolCall("Write", {"file_path": name, "content": "x"}) for name in REFUSED]
    calls += [ToolCall("Edit", {"file_path": name, "old_string": "", "new_string": "x"}) for name in REFUSED]
    fake_llm.enqueue(Reply(tool_calls=calls), Reply(text="done"))
    extra = {"ALLOW_WRITE": "1"} if allow == "ALLOW_WRITE=1" else {}
    flags = [] if extra else allow.split()
    proc = ram(*flags, "write them", env=env_for("openai", fake_llm, **extra), cwd=specials)
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    results = tool_results(fake_llm.requests[-1])
    inside = [REFUSED["fifo"], REFUSED["sock"]]
    for result, refused in zip(results[:2] + results[3:5], inside * 2, strict=True):
        assert result.startswith(f"Error: {refused};"), result
    for result in (results[2], results[5]):  # the link resolves outside the workspace
        if extra:  # ALLOW_WRITE covers the workspace only: denied before the tool runs
            assert result.startswith("Error: ") and "outside" in result, result
        else:
            assert result.startswith(f"Error: {REFUSED['devnull']};"), result
    assert_specials_intact(specials)


# --- 5: Grep and Glob search the workspace whatever rg's stdin is ------------------------------------------


def _private_mounts() -> list[str] | None:
    """A command prefix running its argument in a private mount namespace, or None where that is not allowed."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return None
    for flags in (["-m"], ["-r", "-m"]):
        prefix = [unshare, *flags, "--propagation", "private"]
        if subprocess.run([*prefix, "true"], capture_output=True).returncode == 0:
            return prefix
    return None


SEARCHES = [
    ToolCall("Grep", {"pattern": "needle"}),
    ToolCall("Grep", {"pattern": "needle", "output_mode": "content"}),
    ToolCall("Grep", {"pattern": "needle", "output_mode": "count"}),
    ToolCall("Glob", {"pattern": "**/*.txt"}),
]
FOUND = ["a.txt\nsub/b.txt", "a.txt:1:needle one\nsub/b.txt:1:needle two", "a.txt:1\nsub/b.txt:1", "a.txt\nsub/b.txt"]


def _search_workspace(root: Path) -> Path:
    (root / "sub").mkdir()
    (root / "a.txt").write_text("needle one\n")
    (root / "sub" / "b.txt").write_text("needle two\n")
    os.utime(root / "a.txt", (1_000_000_000, 1_000_000_000))  # newest first: sub/b.txt, then a.txt
    stdin = root.parent / f"{root.name}-stdin.txt"
    stdin.write_text("hay, and no needle... well: needle\n")  # what rg would search if it read its stdin
    return stdin


def _normalised(results: list[str]) -> list[str]:
    return ["\n".join(sorted(result.splitlines())) for result in results]


def test_grep_and_glob_search_the_workspace_when_devnull_is_a_regular_file(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    prefix = _private_mounts()
    if prefix is None:
        pytest.skip("needs a private mount namespace (unshare -m) to make /dev/null a regular file")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    stdin = _search_workspace(workspace)
    fake_devnull = tmp_path / "devnull-as-a-file"
    fake_devnull.write_text("needle in what rg reads as its stdin\n")
    fake_llm.enqueue(Reply(tool_calls=SEARCHES), Reply(text="found"))
    script = 'mount --bind "$1" /dev/null && shift && exec "$@"'
    command = [*prefix, "sh", "-c", script, "sh", str(fake_devnull), sys.executable, "-m", "react_agent_mini"]
    with stdin.open() as task_input:
        proc = subprocess.run(
            [*command, "search"],
            env=env_for("openai", fake_llm),
            cwd=workspace,
            stdin=task_input,
            capture_output=True,
            text=True,
        )
    assert proc.returncode == 0, proc.stderr
    assert _normalised(tool_results(fake_llm.requests[-1])) == _normalised(FOUND)


def test_grep_and_glob_search_the_workspace_when_stdin_is_a_regular_file(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    # A CI job or `ram … < file`: rg must get /dev/null, never ram's stdin.
    stdin = _search_workspace(tmp_path)
    fake_llm.enqueue(Reply(tool_calls=SEARCHES), Reply(text="found"))
    with stdin.open() as task_input:
        proc = subprocess.run(
            [sys.executable, "-m", "react_agent_mini", "search"],
            env=env_for("openai", fake_llm),
            cwd=tmp_path,
            stdin=task_input,
            capture_output=True,
            text=True,
        )
    assert proc.returncode == 0, proc.stderr
    assert _normalised(tool_results(fake_llm.requests[-1])) == _normalised(FOUND)


# --- 8: what commands leave running is stopped at ram's exit, and at a timeout -----------------------------


def _kill(text: str) -> None:
    for pid in pids_with(text):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_background_processes_live_through_the_session_and_stop_when_ram_exits(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    mark = f"{os.getpid()}8"
    names = [f"sleep 300.{mark}", f"sleep 301.{mark}", f"sleep 302.{mark}"]
    alive_between_calls: list[list[int]] = []

    def last_reply(request: RecordedRequest) -> Reply:
        alive_between_calls.append([pid for name in names for pid in pids_with(name)])
        return Reply(text="all started")

    fake_llm.enqueue(
        Reply(
            tool_calls=[
                bash(f"{names[0]} & echo started"),
                bash(f"setsid {names[1]} &"),
                bash(f"nohup {names[2]} >/dev/null 2>&1 &"),
            ]
        )
    )
    fake_llm.set_responder(last_reply)
    try:
        proc = ram("start servers", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert len(alive_between_calls) == 1 and len(alive_between_calls[0]) == 3  # a later call may use them
        assert [pids_with(name) for name in names] == [[], [], []]
        stopped = [line for line in proc.stderr.splitlines() if line.startswith("stopped ")]
        assert len(stopped) == 1, proc.stderr
        assert stopped[0].startswith("stopped 3 background processes that commands left running: ")
        for name in names:
            assert f"{name} (pid " in stopped[0]
    finally:
        for name in names:
            _kill(name)


def test_sigterm_while_the_model_thinks_stops_what_earlier_commands_left(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    name = f"sleep 305.{os.getpid()}"
    fake_llm.enqueue(Reply(tool_calls=[bash(f"setsid {name} >/dev/null 2>&1 &")]), Hang())
    proc = subprocess.Popen(
        [sys.executable, "-m", "react_agent_mini", "serve"],
        env=env_for("openai", fake_llm, ALLOW_WRITE="1"),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        fake_llm.wait_for_requests(2)  # the command ran and returned; ram waits for the model
        assert len(pids_with(name)) == 1
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate()
        assert proc.returncode == 143 and "Traceback" not in err
        assert pids_with(name) == []
        assert f"stopped 1 background process that commands left running: {name} (pid " in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        _kill(name)


def test_a_timeout_stops_what_the_command_started_in_a_new_session(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    name = f"sleep 303.{os.getpid()}"
    alive_after_the_timeout: list[list[int]] = []

    def after_the_call(request: RecordedRequest) -> Reply:
        alive_after_the_timeout.append(pids_with(name))
        return Reply(text="it timed out")

    fake_llm.enqueue(Reply(tool_calls=[bash(f"setsid {name}", timeout=1000)]))
    fake_llm.set_responder(after_the_call)
    try:
        proc = ram("run it", env=env_for("openai", fake_llm, ALLOW_WRITE="1"), cwd=tmp_path)
        assert_no_traceback(proc)
        assert proc.returncode == 0, proc.stderr
        assert alive_after_the_timeout == [[]]
        (result,) = tool_results(fake_llm.requests[-1])
        assert re.fullmatch(
            r"Error: \(no output\)\n\nCommand timed out after 1000 ms; its process group was killed\.\n"
            rf"Also stopped 1 process it had started outside its process group: {name} \(pid \d+\)\.",
            result,
        ), result
        assert not [line for line in proc.stderr.splitlines() if line.startswith("stopped ")]  # none left for exit
    finally:
        _kill(name)


# --- 11: commands do not see the credentials ram uses -------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
def test_commands_do_not_see_the_provider_keys(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    keys = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
    command = "".join(f"printenv {key}; " for key in keys) + "printenv KEPT; echo done"
    fake_llm.enqueue(Reply(tool_calls=[bash(command)]), Reply(text="ok"))
    env = env_for(wire, fake_llm, KEPT="the user's own variable")
    if wire == "openai":  # the other provider's credentials too (the OpenAI-compatible one wins when both are set)
        env.update(ANTHROPIC_API_KEY="sk-ant-unused", ANTHROPIC_AUTH_TOKEN="unused-token")
    proc = ram("look", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_results(fake_llm.requests[-1]) == ["the user's own variable\ndone"]


def test_commands_do_not_see_tokens_sent_to_remote_mcp_servers(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there: the server fails to start, with one warning
    docs = {
        "type": "http",
        "url": f"http://127.0.0.1:{port}/mcp?key=${{URL_KEY}}",
        "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"},
    }
    local = {"command": "true", "env": {"GIVEN": "${STDIO_ONLY}"}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"docs": docs, "local": local}}))
    command = "printenv DOCS_TOKEN; printenv URL_KEY; printenv STDIO_ONLY; echo done"
    fake_llm.enqueue(Reply(tool_calls=[bash(command)]), Reply(text="ok"))
    env = env_for("openai", fake_llm, DOCS_TOKEN="docs-secret", URL_KEY="url-secret", STDIO_ONLY="not ours")
    proc = ram("look", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_results(fake_llm.requests[-1]) == ["not ours\ndone"]


def test_the_user_settings_can_pass_a_credential_and_a_project_cannot(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    opt_in = json.dumps({"shellEnvironment": {"passCredentials": ["OPENAI_API_KEY"]}})
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / "settings.json").write_text(opt_in)
    fake_llm.enqueue(Reply(tool_calls=[bash("printenv OPENAI_API_KEY; echo done")]), Reply(text="ok"))
    proc = ram("look", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_results(fake_llm.requests[-1]) == ["done"]
    warning = [line for line in proc.stderr.splitlines() if "passCredentials" in line]
    assert len(warning) == 1 and "accepted only from the user settings" in warning[0], proc.stderr

    user_settings = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    user_settings.parent.mkdir(parents=True, exist_ok=True)
    user_settings.write_text(opt_in)
    fake_llm.enqueue(Reply(tool_calls=[bash("printenv OPENAI_API_KEY; echo done")]), Reply(text="ok"))
    proc = ram("look", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert tool_results(fake_llm.requests[-1]) == ["test-key\ndone"]
