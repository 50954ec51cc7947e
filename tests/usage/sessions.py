"""Real sessions for the `ram usage` and `ram view` tests: `ram` runs headless (and `ram -c` continues) against the
loopback fake model, with real tools in a real workspace, so the transcripts are exactly what users get.

`Script` answers each request from what it is: a summary's side call (it offers no tools) gets `SUMMARY`, a
subagent's (its system prompt is not ram's) the next of `agent`, and everything else the next of the turn's
replies. `compacting_session` makes one session of three turns over a small compaction threshold and window, so
that old results are cleared (microcompact), old turns dropped (retain) and a summary rewrites the history, and
reads what the stages said they did from `TRACE=1` (`expected_calls`), which the tests compare with the page.
"""

from __future__ import annotations

import os
import re
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path

import msgspec

from ..fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, ToolCall, Usage
from ..test_cli import ECHO, assert_no_traceback, env_for, ram

SUMMARY = "SUMMARY: the user had ten modules read and add() fixed."
SCRIPT_TAG = "<script>window.pwned=1</script>"
BASH_WITH_MARKUP = f"printf '%s\\n' '{SCRIPT_TAG}' '<img src=x onerror=window.pwned=2>'; echo done"


class Script:
    """The fake model's answers, by the kind of request."""

    def __init__(self) -> None:
        self.turn: list[Reply] = []
        self.agent: list[Reply] = []
        self.summaries = 0
        self.lock = threading.Lock()

    def __call__(self, request: RecordedRequest) -> Reply:
        with self.lock:
            body = request.body
            if "tools" not in body:
                self.summaries += 1
                return Reply(text=SUMMARY, usage=Usage(5000, 200, 0))
            system = body.get("system")  # Anthropic's wire; OpenAI's puts it first among the messages
            if system is None and body["messages"][0].get("role") == "system":
                system = body["messages"][0].get("content")
            if isinstance(system, list):
                system = "".join(part.get("text", "") for part in system if isinstance(part, dict))
            if isinstance(system, str) and not system.startswith("You are react-agent-mini") and self.agent:
                return self.agent.pop(0)
            return self.turn.pop(0) if self.turn else Reply(text="(no reply left)")


def run(
    server: FakeLLMServer,
    script: Script,
    cwd: Path,
    prompt: str,
    replies: Sequence[Reply],
    *flags: str,
    wire: str = "openai",
    **env: str,
) -> subprocess.CompletedProcess[str]:
    """One `ram` run (flags such as `-c` first) whose turn gets `replies`; it must succeed."""
    script.turn[:] = replies
    server.set_responder(script)
    proc = ram(*ECHO, *flags, prompt, env=env_for(wire, server, **env), cwd=cwd)  # the notes are Echo calls
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    return proc


def read(path: str, usage: Usage | None = None) -> Reply:
    return Reply(text=f"Reading {path}.", tool_calls=[ToolCall("Read", {"file_path": path})], usage=usage or Usage())


def echo(number: int, usage: Usage | None = None) -> Reply:
    long = f"note {number}: " + "lorem ipsum dolor sit amet " * 60  # Echo is not regenerable: only a drop removes it
    return Reply(text=f"Noting {number}.", tool_calls=[ToolCall("Echo", {"message": long})], usage=usage or Usage())


COMPACTING_ENV = {
    "ALLOW_WRITE": "1",
    "TRACE": "1",
    "COMPACT_THRESHOLD_CHARS": "12000",
    "CONTEXT_WINDOW_TOKENS": "40000",
    "AUTOCOMPACT_PERCENT": "15",
}


def compacting_workspace(root: Path) -> Path:
    for i in range(6):
        (root / f"mod{i}.py").write_text(f"value_{i} = '{'x' * 60}'\n" * 60)
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return root


def compacting_session(server: FakeLLMServer, cwd: Path) -> list[str]:
    """Three turns in `cwd` (a `compacting_workspace`): Reads, long Echo notes, an Edit, a Bash command whose output
    holds markup, a Write; the third turn starts with a summary. The stderr lines of the runs, in order."""
    script = Script()
    first = [
        read("mod0.py", Usage(1200, 40, 0)),
        echo(0, Usage(900, 30, 600)),
        read("mod1.py", Usage(900, 30, 400)),
        read("calc.py", Usage(900, 30, 800)),
        Reply(
            tool_calls=[
                ToolCall("Edit", {"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"})
            ]
        ),
        Reply(tool_calls=[ToolCall("Bash", {"command": BASH_WITH_MARKUP})], usage=Usage(700, 25, 300)),
        Reply(text="Read two modules and fixed add.", usage=Usage(600, 50, 500, 120)),
    ]
    second = [
        read("mod2.py", Usage(900, 30, 400)),
        echo(2, Usage(900, 30, 600)),
        read("mod3.py", Usage(900, 30, 400)),
        echo(3, Usage(900, 30, 600)),
        Reply(tool_calls=[ToolCall("Write", {"file_path": "notes.txt", "content": "one\ntwo\nthree\n"})]),
        Reply(text="Done with more."),
    ]
    third = [read("mod4.py", Usage(900, 30, 400)), echo(4, Usage(900, 30, 600)), Reply(text="All done.")]
    lines = run(server, script, cwd, "read the modules", first, **COMPACTING_ENV).stderr.splitlines()
    lines += run(server, script, cwd, "more", second, "-c", **COMPACTING_ENV).stderr.splitlines()
    lines += run(server, script, cwd, "again", third, "-c", **COMPACTING_ENV).stderr.splitlines()
    assert script.summaries == 1, "the third turn should have started with a summary"
    return lines


class Expected(msgspec.Struct):
    """One model call as the loop's trace tells it."""

    kind: str
    cleared: int = 0
    dropped: int = 0
    events: list[str] = msgspec.field(default_factory=list)


_MICRO = re.compile(r"^\[trace\] compact\.micro replaced=(\d+)")
_RETAIN = re.compile(r"^\[trace\] compact\.run stage=retain .*droppedMessages=(\d+)")


def expected_calls(trace: Sequence[str]) -> list[Expected]:
    """Every model call of the runs, from their `TRACE=1` lines: each loop iteration (`query.turn_start`) makes one
    call, after a summary's side call when `compact.auto` says one ran; stage ② says how many results it cleared
    and ③ how many messages it dropped. A call clears (drops) first when it clears (drops) more than the call
    before it did since the last summary."""
    calls: list[Expected] = []
    current: Expected | None = None
    for line in trace:
        if line.startswith("[trace] query.turn_start"):
            current = Expected("turn")
            calls.append(current)
        elif current is None:
            continue
        elif line.startswith("[trace] compact.auto "):
            calls.insert(len(calls) - 1, Expected("summary"))
        elif found := _MICRO.match(line):
            current.cleared = int(found.group(1))
        elif found := _RETAIN.match(line):
            current.dropped = int(found.group(1))
    cleared = dropped = 0
    for call in calls:
        if call.kind == "summary":
            cleared = dropped = 0
            continue
        if call.cleared > cleared:
            call.events.append("micro")
        if call.dropped > dropped:
            call.events.append("retain")
        cleared, dropped = call.cleared, call.dropped
    return calls


def transcripts(data_home: Path) -> list[Path]:
    """The session transcripts under `$XDG_DATA_HOME` (not the subagents')."""
    return sorted((data_home / "react-agent-mini" / "sessions").glob("*/*.jsonl"))


def markup_session(server: FakeLLMServer, cwd: Path) -> str:
    """A session whose Bash command prints markup (a script, an image with an onerror); its id."""
    run(
        server,
        Script(),
        cwd,
        "print some markup",
        [Reply(tool_calls=[ToolCall("Bash", {"command": BASH_WITH_MARKUP})]), Reply(text="Printed <b>it</b>.")],
        ALLOW_WRITE="1",
    )
    (saved,) = transcripts(cwd_data_home())
    return saved.stem


def cwd_data_home() -> Path:
    """`$XDG_DATA_HOME`, which conftest.py sets for each test."""
    return Path(os.environ["XDG_DATA_HOME"])
