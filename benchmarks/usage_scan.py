"""How fast `ram usage` reads a year of sessions, and the memory it needs.

It first writes `--sessions` (10,000) realistic transcripts with the project's own writer — `transcript.Transcript`
for the records and `call_record.call_fields` for each model call, as a session writes them — over a year of days
(a fixed clock per session), 30 projects and three models: sessions of 1 to 6 turns and a long-tailed number of
calls (median about 12, up to 300), Read results cut from the standard library's sources, Bash and Grep output,
Edit inputs, assistant text; one session in twenty has a subagent with its own transcript. They are written once
into `--dir` (default: a temporary folder, removed after; give a folder to keep them for later runs).

Then it times `ram usage` (a fresh process each run: the table by day, `--by project`, `--json --by session`)
beside `python -c pass`, and prints each one's peak RSS (the child's `ru_maxrss`). PYTHONDONTWRITEBYTECODE is
unset for the children, so they run from bytecode as installed ram does.

Run: `.venv/bin/python -m benchmarks.usage_scan [--sessions 10000] [--runs 5] [--dir PATH]`
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from unittest import mock

from react_agent_mini.messages import Message, ToolUseBlock

from ._stats import line

PROJECTS = 30
MODELS = (("deepseek-chat", "openai", 0.7), ("claude-sonnet-4-5", "anthropic", 0.2), ("gpt-4.1", "openai", 0.1))
YEAR_START = time.mktime((2025, 1, 6, 9, 0, 0, 0, 0, -1))


def sources(count: int = 400) -> list[str]:
    """Texts of standard-library modules, as Read would show them (numbered lines), to cut results from."""
    found = sorted(Path(sysconfig.get_paths()["stdlib"]).glob("*.py"))[:count]
    out = []
    for path in found:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()[:400]
        out.append("\n".join(f"{n}\t{text}" for n, text in enumerate(lines, 1)))
    return out


class Writer:
    """Sessions as ram writes them (the clock patched to the session's own day)."""

    def __init__(self, root: Path, seed: int = 7) -> None:
        from react_agent_mini.app import SYSTEM_PROMPT, default_tools

        self.root = root
        self.random = random.Random(seed)
        self.texts = sources()
        self.system = SYSTEM_PROMPT
        self.specs = default_tools().specs()
        self.now = 0.0

    def clock(self) -> float:
        self.now += self.random.uniform(0.3, 25.0)
        return self.now

    def session(self, number: int) -> tuple[int, int]:
        """Write session `number`; (its calls, its subagents' calls)."""
        from react_agent_mini import transcript

        rnd = self.random
        project = rnd.randrange(PROJECTS)
        cwd = Path(f"/home/dev/work/project-{project:02d}")
        model, provider = rnd.choices([(m, p) for m, p, _ in MODELS], [w for _, _, w in MODELS])[0]
        self.now = YEAR_START + rnd.uniform(0, 365 * 86400)
        session_id = f"{number:08x}-0000-4000-8000-{rnd.getrandbits(48):012x}"
        folder = self.root / "react-agent-mini" / "sessions" / transcript.workspace_slug(cwd)
        with mock.patch.object(time, "time", self.clock):
            meta = {"cwd": str(cwd), "model": model, "provider": provider, "version": "0.1.0"}
            file = transcript.Transcript.create(folder, session_id, meta)
            try:
                calls = int(min(300, max(1, rnd.lognormvariate(2.5, 0.9))))
                turns = min(calls, rnd.randint(1, 6))
                self._conversation(file, model, calls, turns)
            finally:
                file.close()
            agent_calls = 0
            if rnd.random() < 0.05:
                agent_calls = rnd.randint(2, 10)
                agents = folder / session_id / "subagents"
                sub = transcript.Transcript.create(
                    agents, f"agent-{rnd.getrandbits(64):016x}", {**meta, "agent_type": "Explore"}
                )
                try:
                    self._conversation(sub, model, agent_calls, 1)
                finally:
                    sub.close()
        return calls, agent_calls

    def _conversation(self, file: object, model: str, calls: int, turns: int) -> None:
        from react_agent_mini.call_record import call_fields
        from react_agent_mini.events import AssistantTurn
        from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, Usage, user_text
        from react_agent_mini.providers.base import ModelRequest
        from react_agent_mini.transcript import Transcript

        assert isinstance(file, Transcript)
        rnd = self.random
        history: list[Message] = []
        turn_ends = set(rnd.sample(range(1, calls), turns - 1)) if calls > 1 else set()
        cached = 0

        def add(message: Message) -> None:
            history.append(message)
            file.append(message)

        add(
            user_text(
                f"Task {rnd.getrandbits(32):x}: fix the failing test and explain why it failed.", id=f"{len(history)}"
            )
        )
        for call in range(calls):
            last = call == calls - 1 or call + 1 in turn_ends
            request = ModelRequest(self.system, tuple(history), self.specs)
            if last:
                answer = Message(
                    "assistant",
                    (TextBlock("Done: " + "the change is small and the tests pass. " * rnd.randint(1, 8)),),
                    id=f"a{call}",
                )
            else:
                use = self._tool_use(call)
                answer = Message("assistant", (TextBlock("Looking at it."), use), id=f"a{call}")
            add(answer)
            size = 6000 + sum(len(m.text) for m in history[-6:]) // 3 + 400 * call
            reads = int(cached * 0.9) if model != "gpt-4.1" or rnd.random() < 0.5 else 0
            usage = Usage(
                max(200, size - reads),
                rnd.randint(20, 900),
                reads,
                0 if model != "claude-sonnet-4-5" else rnd.randint(0, 800),
            )
            cached = size
            file.called(
                call_fields(usage, model, AssistantTurn(answer, "end_turn" if last else "tool_use", usage, request))
            )
            if last:
                if call != calls - 1:
                    add(
                        user_text(
                            "Now also " + rnd.choice(["add a test.", "update the docs.", "clean it up."]), id=f"u{call}"
                        )
                    )
                continue
            add(Message("user", (ToolResultBlock(f"t{call}", self._result(answer)),), id=f"r{call}"))

    def _tool_use(self, call: int) -> ToolUseBlock:

        kind = self.random.random()
        if kind < 0.45:
            return ToolUseBlock(f"t{call}", "Read", {"file_path": f"src/module_{self.random.randrange(300)}.py"})
        if kind < 0.7:
            return ToolUseBlock(f"t{call}", "Bash", {"command": "python -m pytest -q tests/test_app.py"})
        if kind < 0.85:
            return ToolUseBlock(f"t{call}", "Grep", {"pattern": "def [a-z_]+\\(", "output_mode": "content"})
        old = self.random.choice(self.texts)[:600]
        return ToolUseBlock(
            f"t{call}", "Edit", {"file_path": "src/app.py", "old_string": old, "new_string": old.upper()}
        )

    def _result(self, answer: Message) -> str:
        name = answer.tool_uses[0].name
        text = self.random.choice(self.texts)
        size = int(min(60_000, max(80, self.random.lognormvariate(7.3, 1.1))))
        if name == "Edit":
            return "Edited src/app.py (1 replacement)."
        if name == "Bash":
            return "\n".join(f"tests/test_app.py::test_{i} PASSED" for i in range(size // 40)) + "\n3 passed in 0.12s"
        return text[:size]


def generate(root: Path, sessions: int) -> tuple[int, int, int]:
    """Write the sessions (unless `root` holds them already); (files, calls, bytes)."""
    stamp = root / f".generated-{sessions}"
    if not stamp.exists():
        if (root / "react-agent-mini").exists():
            shutil.rmtree(root / "react-agent-mini")
        writer = Writer(root)
        started = time.perf_counter()
        calls = 0
        for number in range(sessions):
            main, agent = writer.session(number)
            calls += main + agent
            if number and number % 1000 == 0:
                print(f"  … {number:,} sessions written ({time.perf_counter() - started:.0f} s)", file=sys.stderr)
        stamp.write_text(str(calls))
    files = list((root / "react-agent-mini" / "sessions").rglob("*.jsonl"))
    return len(files), int(stamp.read_text()), sum(f.stat().st_size for f in files)


PEAK = """
import atexit, sys
def _peak():
    with open("/proc/self/status") as status:
        found = [l.split()[1] for l in status if l.startswith("VmHWM:")]
    sys.stderr.write(f"\\npeak-kb {found[0] if found else 0}\\n")
atexit.register(_peak)
"""
"""Put in front of each child: it reports its own peak RSS as it exits (VmHWM: the process's own memory, not the
forked parent's, which `ru_maxrss` would count)."""


def measure(code: str, args: Sequence[str], env: dict[str, str], runs: int) -> tuple[list[float], int]:
    """Wall times of `runs` runs of `python -c PEAK+code args` (after one warm-up) and the largest peak RSS (KB)."""
    times, peak = [], 0
    for attempt in range(runs + 1):
        started = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", PEAK + code, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        elapsed = time.perf_counter() - started
        if done.returncode != 0:
            raise SystemExit(f"{code} {' '.join(args)} failed: {done.stderr.decode(errors='replace')}")
        if attempt:
            times.append(elapsed)
            said = done.stderr.decode(errors="replace").splitlines()
            lines = [text for text in said if text.startswith("peak-kb ")]
            peak = max(peak, int(lines[-1].split()[1]) if lines else 0)
    return times, peak


RAM = "import sys\nfrom react_agent_mini.cli import main\nsys.exit(main(sys.argv[1:]))"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.usage_scan", description=__doc__.partition("\n")[0])
    parser.add_argument("--sessions", type=int, default=10_000, metavar="N", help="sessions to generate (10000)")
    parser.add_argument("--runs", type=int, default=5, metavar="N", help="measured runs per figure (5)")
    parser.add_argument("--dir", type=Path, help="keep the generated sessions here (default: a temporary folder)")
    args = parser.parse_args(argv)
    temporary = None if args.dir else tempfile.mkdtemp(prefix="ram-usage-bench-")
    root = args.dir or Path(temporary or "")
    root.mkdir(parents=True, exist_ok=True)
    try:
        started = time.perf_counter()
        files, calls, size = generate(root, max(1, args.sessions))
        print(
            f"{args.sessions:,} sessions: {files:,} transcripts, {calls:,} model calls, {size / 2**20:,.0f} MB "
            f"(ready in {time.perf_counter() - started:.1f} s)"
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["XDG_DATA_HOME"] = str(root)
        for label, code, words in (
            ("python -c pass", "pass", []),
            ("ram usage (by day)", RAM, ["usage"]),
            ("ram usage --by project", RAM, ["usage", "--by", "project"]),
            ("ram usage --json --by session", RAM, ["usage", "--json", "--by", "session"]),
        ):
            times, peak = measure(code, words, env, max(1, args.runs))
            print(line(label, times, f"peak RSS {peak / 1024:.1f} MB"))
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
