"""A hook that prints without end, end to end: `ram` as a user runs it, a user-level UserPromptSubmit command hook
(no trust needed), the loopback fake LLM as the model, and ram's peak RSS as the kernel counts it.

A hook's stdout is read up to 1 MiB; past it the hook is stopped (its process group killed) and read as what it
printed before, with one line saying so. `yes` used to hold the turn until the hook's timeout while ram's memory
grew; 400 MB printed once took ram to 796 MB. What reaches the model is cut again, to the hook text's share of the
window, and says so.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from react_agent_mini.compact.hook_context import budget_tokens
from react_agent_mini.compact.tokens import estimate_tokens

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..processes import pids_with
from ..test_cli import env_for

CONTEXT = "UserPromptSubmit hook additional context: "
PEAK_RSS_MB = 200
"""ram's peak RSS must stay under this (34 MB here for a short task, with either hook; reading 400 MB whole took
796 MB, and `yes` 1.4 GB within a 3-second timeout)."""


def user_hook(command: str) -> None:
    path = Path(os.environ["XDG_CONFIG_HOME"]) / "react-agent-mini" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    hook = {"type": "command", "command": command}
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": [{"matcher": "", "hooks": [hook]}]}}))


MEASURED = """
import os, subprocess, sys
with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
    proc = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=out, stderr=err)
    _pid, status, usage = os.wait4(proc.pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""
"""Runs a command and prints its exit code and peak RSS (kB). A small process of its own starts it: a child's
peak counts what it held before its exec, the memory of the process that forked it (here, the test run's)."""


def run_measured(task: str, env: dict[str, str], cwd: Path) -> tuple[int, str, str, int]:
    """`ram TASK` to its end: (exit code, stdout, stderr, peak RSS in MB of ram and what it waited for)."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    agent = [sys.executable, "-m", "react_agent_mini", task]
    measured = subprocess.run(
        [sys.executable, "-c", MEASURED, str(out), str(err), *agent],
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    code, peak_kb = map(int, measured.stdout.split())
    return code, out.read_text(), err.read_text(), peak_kb // 1024


def sent_context(fake_llm: FakeLLMServer) -> str:
    (message,) = [m for m in fake_llm.requests[0].body["messages"] if str(m.get("content", "")).startswith(CONTEXT)]
    return str(message["content"])


def test_a_hook_running_yes_is_stopped_at_the_cap(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    user_hook("yes ram-hook-output-cap")
    fake_llm.enqueue(Reply(text="Carrying on."))
    code, stdout, stderr, peak = run_measured("hello", env_for("openai", fake_llm), tmp_path)
    assert code == 0, stderr
    assert stdout == "Carrying on.\n" and "Traceback" not in stderr
    warnings = [line for line in stderr.splitlines() if "printed more than 1 MiB" in line]
    assert warnings == [
        "[note] warning: UserPromptSubmit hook `yes ram-hook-output-cap` printed more than 1 MiB on stdout; ram "
        "stopped it there and read what came before"
    ]
    assert not pids_with("ram-hook-output-cap")  # stopped, not left printing
    context = sent_context(fake_llm)
    assert context.startswith(f"{CONTEXT}ram-hook-output-cap\nram-hook-output-cap\n")
    assert context.endswith("characters are kept …]") and "hook output cut by ram" in context
    assert estimate_tokens(context) <= budget_tokens(128_000) + 50  # the default window's share, and the note
    assert peak < PEAK_RSS_MB, f"peak RSS {peak} MB"


def test_a_hook_printing_400_mb_keeps_ram_small(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    user_hook("yes 'the log of a very long build' | head -c 400000000")
    fake_llm.enqueue(Reply(text="Read the log."))
    code, stdout, stderr, peak = run_measured("what broke?", env_for("openai", fake_llm), tmp_path)
    assert code == 0, stderr
    assert stdout == "Read the log.\n"
    assert "printed more than 1 MiB on stdout" in stderr
    assert sent_context(fake_llm).startswith(f"{CONTEXT}the log of a very long build\n")
    assert peak < PEAK_RSS_MB, f"peak RSS {peak} MB"


def test_json_within_the_cap_still_parses(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """A JSON answer of nearly 1 MiB is read whole and parsed; its context is then cut to the model's share."""
    script = tmp_path / "big_json.py"
    script.write_text(
        "import json\n"
        "context = 'remember the style guide\\n' * 40000\n"  # 1,000,000 characters
        "answer = {'hookEventName': 'UserPromptSubmit', 'additionalContext': context}\n"
        "print(json.dumps({'hookSpecificOutput': answer}))\n"
    )
    user_hook(f"{sys.executable} {script}")
    fake_llm.enqueue(Reply(text="Noted."))
    code, _stdout, stderr, _peak = run_measured("go", env_for("openai", fake_llm), tmp_path)
    assert code == 0, stderr
    assert "printed more than" not in stderr and "Traceback" not in stderr
    context = sent_context(fake_llm)
    assert context.startswith(f"{CONTEXT}remember the style guide\nremember the style guide\n")
    assert "of 1,000,000 characters are kept" in context  # cut for the model, after the JSON parsed whole
