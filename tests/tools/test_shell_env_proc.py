"""With the sandbox off, what ram starts cannot read ram's own environment from /proc (`shell_env.guard_own_process`).

ram withholds its provider key from a command's environment, but a command runs as the same user as ram, and
`/proc/<ram's pid>/environ` holds the environment ram was started with — key included — for any process of that
user to read: `cat /proc/$PPID/environ`. The tests run `ram` headless, `--sandbox off`, against the loopback fake
LLM, and have a Bash command (and, in the other test, a hook) read its parent's environ, walk up its parents and
read every `/proc/*/environ` it can: the key must be in none of it.

Root reads any process's environ whatever ram does, and CI runs the tests as root, so `ram` runs as `nobody`
(`setpriv --reuid=65534 --regid=65534 --clear-groups`, or `runuser -u nobody`) in a workspace and home that user
owns; run as another user already, the tests run `ram` as that user. They are skipped only when they run as root
and no way to start a process as `nobody` that can import the package works.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall

KEY = "sk-proc-environ-canary-5c1f0e7d9a"
"""The provider key ram runs with: it must reach the fake LLM and nothing ram starts."""
NOBODY = 65534

READ_EVERYTHING = r"""
echo "parent is: $(tr '\0' ' ' < /proc/$PPID/cmdline)"
echo "--- the parent's environ"; tr '\0' '\n' < /proc/$PPID/environ
echo "--- up the parents"
p=$PPID
while [ "$p" -gt 1 ]; do
  tr '\0' '\n' < /proc/$p/environ
  p=$(awk '/^PPid:/ {print $2}' /proc/$p/status)
done
echo "--- every environ readable"
for f in /proc/[0-9]*/environ; do tr '\0' '\n' < "$f"; done
echo "--- its own environ: $(tr '\0' '\n' < /proc/$$/environ | grep -c '^PATH=') PATH"
echo "--- printenv: [$(printenv OPENAI_API_KEY)]"
""".strip()


def _other_user() -> list[str] | None:
    """The command prefix that runs a process as a user who is not root ([] when we are not root), or None."""
    if os.geteuid() != 0:
        return []
    candidates = []
    if setpriv := shutil.which("setpriv"):
        candidates.append([setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"])
    if runuser := shutil.which("runuser"):
        candidates.append([runuser, "-u", "nobody", "--"])
    for prefix in candidates:
        probe = subprocess.run(
            [*prefix, sys.executable, "-c", "import os, react_agent_mini; print(os.geteuid())"],
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
            cwd="/",
        )
        if probe.returncode == 0 and probe.stdout.strip() not in ("", "0"):
            return prefix
    return None


@pytest.fixture(scope="module")
def as_user() -> list[str]:
    prefix = _other_user()
    if prefix is None:
        pytest.skip(
            "running as root, and neither `setpriv` nor `runuser` can start a process as nobody (uid 65534) that "
            "imports react_agent_mini: root reads every /proc/<pid>/environ, so the check needs another user"
        )
    return prefix


@pytest.fixture
def home() -> Iterator[Path]:
    """A directory the user `ram` runs as owns: the workspace and HOME/XDG directories go in it."""
    root = Path(tempfile.mkdtemp(prefix="ram-proc-"))
    for sub in ("work", "home", "config/react-agent-mini", "data", "cache", "state"):
        (root / sub).mkdir(parents=True)
    if os.geteuid() == 0:
        for path in (root, *root.rglob("*")):
            os.chown(path, NOBODY, NOBODY)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def llm() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(api_key=KEY) as server:
        yield server


def run_ram(prefix: list[str], root: Path, llm: FakeLLMServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "RAM_", "XDG_"))}
    env.update(
        OPENAI_API_KEY=KEY,
        OPENAI_BASE_URL=llm.openai_base_url,
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_STATE_HOME=str(root / "state"),
        PYTHONDONTWRITEBYTECODE="1",
    )
    command = [*prefix, sys.executable, "-m", "react_agent_mini", "--sandbox", "off", *args]
    return subprocess.run(command, env=env, cwd=root / "work", stdin=subprocess.DEVNULL, capture_output=True, text=True)


def tool_results(llm: FakeLLMServer) -> list[str]:
    messages = llm.requests[-1].body["messages"]
    return [str(m["content"]) for m in messages if m["role"] == "tool"]


def test_a_bash_command_cannot_read_the_key_from_rams_proc_environ(
    as_user: list[str], home: Path, llm: FakeLLMServer
) -> None:
    command = "{\n" + READ_EVERYTHING + "\n} 2>&1"
    llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": command})]), Reply(text="done"))
    proc = run_ram(as_user, home, llm, "--permission-mode", "bypassPermissions", "look around /proc")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    [seen] = tool_results(llm)
    assert "react_agent_mini" in seen.split("--- the parent's environ")[0]  # $PPID is ram itself
    assert "/environ: Permission denied" in seen  # ram's environ was there to read, and refused
    assert "--- its own environ: 1 PATH" in seen  # reading an environ works: the command reads its own
    assert "--- printenv: []" in seen  # and its own environment has no key, as before
    assert KEY not in seen


def test_a_hook_cannot_read_the_key_from_rams_proc_environ(as_user: list[str], home: Path, llm: FakeLLMServer) -> None:
    script, saw = home / "work" / "read.sh", home / "work" / "hook-saw.txt"
    script.write_text(READ_EVERYTHING + "\n")
    hook = {"type": "command", "command": f"exec sh '{script}' > '{saw}' 2>&1"}  # exec: the script's $PPID is ram
    settings = home / "config" / "react-agent-mini" / "settings.json"  # the user's own file: its hooks apply
    settings.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [hook]}]}}))
    if os.geteuid() == 0:
        for path in (settings, script):
            os.chown(path, NOBODY, NOBODY)
    llm.enqueue(Reply(text="done"))
    proc = run_ram(as_user, home, llm, "hello")
    assert proc.returncode == 0, proc.stderr
    seen = saw.read_text()
    assert "react_agent_mini" in seen.split("--- the parent's environ")[0]
    assert "/environ: Permission denied" in seen and "--- its own environ: 1 PATH" in seen
    assert "--- printenv: []" in seen
    assert KEY not in seen
