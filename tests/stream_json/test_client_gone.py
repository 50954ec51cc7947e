"""A Claude Agent SDK client that dies mid-turn: ram notices its closed stdout at once, stops the turn (the model
stream, the running command) and exits, instead of going on — spending tokens — until it next writes a line.

The client is the unmodified SDK (`ClaudeSDKClient`) in a process of its own, which the test kills with SIGKILL, as
a crash or an OOM kill would: the kernel closes its ends of ram's pipes, and nothing else tells ram. The test
watches ram itself (a pidfd: ram is no longer anyone's child the test can wait for) and the fake model server.

And the other side of it: stdin ending alone (`echo '{"type":"user",...}' | ram --input-format stream-json ...`)
still lets the turn run to its end (`test_sdk_protocol.test_stdin_closed_at_once_still_finishes_every_queued_turn`
and the one-shot pipe below).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..processes import pids_with, wait_until
from ..test_cli import env_for

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pidfds and /proc are Linux's")

STOP_BOUND = 30.0
"""Seconds ram may take, after its client died, to stop and exit. Expected well under a second (measured ≈0.2 s);
the rest is headroom for a loaded machine. The old behaviour went on for the whole stream or command."""
ONE_SHOT_ARGV = ("--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
WAIT = 120.0
"""A hang guard for the steps before the kill (a loaded machine starting Python and the SDK)."""

CLIENT = """
import asyncio, sys
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient, SystemMessage

async def main():
    cli, cwd, prompt = sys.argv[1:4]
    options = ClaudeAgentOptions(cli_path=cli, cwd=cwd, allowed_tools=["Bash(sleep:*)"])
    async with ClaudeSDKClient(options) as client:
        await client.query(prompt)
        async for message in client.receive_messages():
            if isinstance(message, SystemMessage) and message.subtype == "init":
                print("init", flush=True)

asyncio.run(main())
"""


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def seconds_until_gone(pidfd: int, bound: float) -> float | None:
    """Seconds until the process behind `pidfd` exits (None: still running after `bound`)."""
    started = time.monotonic()
    poller = select.poll()
    poller.register(pidfd, select.POLLIN)
    if not poller.poll(bound * 1000):
        return None
    return time.monotonic() - started


def run_and_kill_the_client(
    tmp_path: Path, fake_llm: FakeLLMServer, prompt: str, started: Callable[[], object]
) -> float | None:
    """Start an SDK client driving ram, wait until the turn is under way (`started()` is true), SIGKILL the client;
    the seconds ram then goes on for (None: more than STOP_BOUND)."""
    cli = tmp_path / "ram-cli"
    cli.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m react_agent_mini "$@"\n')
    cli.chmod(0o755)
    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    work = tmp_path / "work"
    work.mkdir()
    env = env_for("openai", fake_llm)
    stderr = (tmp_path / "stderr.txt").open("w")
    client = subprocess.Popen(
        [sys.executable, str(script), str(cli), str(work), prompt],
        env=env,
        stdout=subprocess.PIPE,
        stderr=stderr,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    pidfd = -1
    try:
        assert client.stdout is not None
        assert client.stdout.readline().strip() == "init", (tmp_path / "stderr.txt").read_text()
        assert wait_until(started, WAIT), (tmp_path / "stderr.txt").read_text()
        (ram,) = children_of(client.pid)  # the wrapper exec'd Python: ram is the client's one child
        pidfd = os.pidfd_open(ram)
        client.send_signal(signal.SIGKILL)
        client.wait(timeout=WAIT)
        return seconds_until_gone(pidfd, STOP_BOUND)
    finally:
        if pidfd != -1:
            os.close(pidfd)
        if client.poll() is None:
            client.kill()
            client.wait()
        stderr.close()


def test_a_client_that_dies_during_a_slow_stream_stops_ram(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    slow = Reply(text="word " * 300, chunk_size=5, delay=0.5)  # 300 events: 150 s if nothing stops it
    fake_llm.enqueue(slow, Reply(text="a retry or a next turn would ask for this"))
    gone_after = run_and_kill_the_client(tmp_path, fake_llm, "talk for a long time", lambda: fake_llm.requests)
    print(f"ram went on for {gone_after} s after its client died (slow stream)")
    assert gone_after is not None, f"ram was still running {STOP_BOUND} s after its client died"
    assert len(fake_llm.requests) == 1  # it did not retry the stream or ask again
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


def test_a_client_that_dies_during_a_long_command_stops_it_and_ram(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    marker = "sleep 177.5"
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": marker})]), Reply(text="after the command"))
    gone_after = run_and_kill_the_client(tmp_path, fake_llm, "run the command", lambda: pids_with(marker))
    print(f"ram went on for {gone_after} s after its client died (long command)")
    assert gone_after is not None, f"ram was still running {STOP_BOUND} s after its client died"
    assert wait_until(lambda: not pids_with(marker), WAIT), "the command outlived ram"
    assert len(fake_llm.requests) == 1  # no model call after the command
    assert "Traceback" not in (tmp_path / "stderr.txt").read_text()


def test_stdin_ending_alone_still_runs_a_one_shot_prompt_to_its_end(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    """`echo '{"type":"user",...}' | ram --input-format stream-json ...`: stdin ends at once; the turn — a slow
    stream, then a command — still runs to its result, which a reader still reading stdout gets."""
    fake_llm.enqueue(
        Reply(text="word " * 20, chunk_size=5, delay=0.05, tool_calls=[ToolCall("Bash", {"command": "sleep 1"})]),
        Reply(text="finished"),
    )
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "go"}})
    proc = subprocess.run(
        [sys.executable, "-m", "react_agent_mini", *ONE_SHOT_ARGV, "--allowed-tools", "Bash(sleep:*)"],
        input=line + "\n",
        capture_output=True,
        text=True,
        env=env_for("openai", fake_llm),
        cwd=tmp_path,
        timeout=WAIT,
    )
    assert proc.returncode == 0, proc.stderr
    result = [json.loads(out) for out in proc.stdout.splitlines()][-1]
    assert result["type"] == "result" and result["result"] == "finished"
    assert len(fake_llm.requests) == 2
