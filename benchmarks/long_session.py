"""Per-call cost over one long session: does ram's own work per model call grow with the history?

One headless-style session of N model calls (default 300) in-process, with the production assembly
(`build_session`: real OpenAI-compatible or Anthropic provider over httpx, retries, permission policy,
compaction, transcript on disk) against the loopback fake LLM server (`tests/fakes/fake_llm.py`) running in a
child process, so the server's parsing of every request body costs neither this process's CPU nor its memory.
The server answers each call with one tool call, round robin, all of them real and read-only:

* `--results large` (the default): Read of a file copied from the standard library (a different one each time,
  so no "unchanged" stubs), Bash (`seq 1 N`, `ls -la`, `cat` of a file: up to Bash's 30,000-character cap), Grep
  (content mode). The history and the transcript grow by about 25 KB per call, and compaction acts.
* `--results small`: the same tools with a few lines each (Read with a limit, `echo`, Grep's first two files),
  with a 400k window and a 120k-token compaction threshold: the request grows by two short messages per call,
  to 2,000 messages at 1,000 calls, and stays under the threshold, so nothing but the history's length changes
  from call to call.

Grep searches a fixed folder of 20 modules, so a tool's own cost does not grow with the workspace.

Per call, CPU time of this process (`time.process_time`, every thread; the server and the tools' child
processes are other processes), from one model call to the next:

* serialise — JSON-encoding the request body, timed where httpx does it: inherently proportional to the request,
  which must be sent whole on every call (the wire formats are stateless);
* ours — all the rest: the autocompact check, compaction stages ①–③, the provider's message conversion
  (`convert`, shown apart too), streaming and parsing the answer, running the tool's in-process part, and the
  bookkeeping (history, transcript line, context meter, "seen whole" ids, events).

Figures are medians over a window of calls around calls 1, 100, 300 and N (±5 calls), the ratio of the last
window to the first, the request's size and message count, and the process's RSS there (and its peak).
Deterministic input; timings on a shared machine are noisy, so read ratios within one run.
Run: `.venv/bin/python -m benchmarks.long_session [--calls 300] [--wire openai|anthropic] [--results large|small]`
from the repo root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ._stats import fmt_seconds

API_KEY = "test-key"
WINDOW = 20
"""Calls on each side of a reported call that its median covers."""
GREP_FILES = 20
"""Modules in the folder Grep searches (fixed: the tool's own cost must not grow with the session)."""
SMALL_WINDOW_TOKENS = "400000"
SMALL_THRESHOLD_CHARS = "480000"
"""The window and compaction threshold (120k tokens) of a `--results small` session: the request stays under it."""


def stdlib_files(count: int) -> list[Path]:
    """`count` standard-library modules of 8-200 KB, in a fixed order (Read takes whole files under 256 KB)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = sorted(p for p in root.glob("*.py") if 8_000 <= p.stat().st_size <= 200_000)
    if not found:
        raise SystemExit(f"no standard-library modules found under {root}")
    return [found[i % len(found)] for i in range(count)]


def tool_calls(calls: int, files: Sequence[str], results: str = "large") -> list[dict[str, Any]]:
    """The fake server's script: calls-1 tool calls (Read, Bash, Read, Grep, ...), then a final answer. `large`:
    whole files and long outputs (≈25 KB a call, so compaction acts); `small`: a few lines each (the request
    grows by two short messages a call and stays under the compaction threshold)."""
    script: list[dict[str, Any]] = []
    reads = iter(files)
    small = results == "small"
    for i in range(calls - 1):
        kind = i % 4
        if kind in (0, 2):
            arguments: dict[str, Any] = {"file_path": next(reads)}
            if small:
                arguments.update(offset=1 + i % 50, limit=2)
            call = {"name": "Read", "arguments": arguments}
            text = "Reading it."
        elif kind == 1:
            if small:
                commands = [f"echo step {i}", "pwd", "echo ok"]
            else:
                commands = [f"seq 1 {5000 + 37 * i}", "ls -la src", f"cat {files[i % len(files)]}"]
            call = {"name": "Bash", "arguments": {"command": commands[(i // 4) % 3], "description": "look"}}
            text = "Running it."
        else:
            patterns = ["def [a-z_]+\\(self", "import ", "return None", "class [A-Z]"]
            arguments = {"pattern": patterns[(i // 4) % 4], "path": "lib", "output_mode": "content"}
            if small:
                arguments.update(output_mode="files_with_matches", head_limit=2)
            call = {"name": "Grep", "arguments": arguments}
            text = "Searching."
        script.append({"type": "reply", "text": text, "tool_calls": [call]})
    script.append({"type": "reply", "text": "Done: the session is over."})
    return script


def start_server(script: list[dict[str, Any]], work: Path) -> tuple[subprocess.Popen[str], str]:
    """The fake server in a child process, fed `script`; (process, base URL)."""
    path = work / "script.json"
    path.write_text(json.dumps(script), encoding="utf-8")
    repo = Path(__file__).resolve().parent.parent
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.fake_llm", "--port", "0", "--api-key", API_KEY, "--script", str(path)],
        cwd=repo,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().strip()
    if not url.startswith("http://127.0.0.1:"):
        proc.kill()
        raise SystemExit(f"the fake server did not start (said {url!r})")
    return proc, url


def rss_kb() -> tuple[int, int]:
    """(current RSS, peak RSS) of this process in kB, from /proc (Linux)."""
    fields: dict[str, int] = {}
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    except OSError:
        pass
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


class Timings(msgspec.Struct):
    """Per-call samples (index 0 = call 1): CPU seconds, sizes, RSS."""

    total: list[float] = msgspec.field(default_factory=list)
    """CPU from this call's start to the next one's (the last: to the end of the session)."""
    serialise: list[float] = msgspec.field(default_factory=list)
    convert: list[float] = msgspec.field(default_factory=list)
    body_bytes: list[int] = msgspec.field(default_factory=list)
    messages: list[int] = msgspec.field(default_factory=list)
    rss_kb: list[int] = msgspec.field(default_factory=list)
    context_tokens: int = 0
    """Estimated tokens of the history at the end (the fake server reports a fixed usage)."""
    threshold_tokens: int = 0
    """Where compaction's stage ② starts making room."""

    @property
    def ours(self) -> list[float]:
        return [t - s for t, s in zip(self.total, self.serialise, strict=True)]


class _Clock:
    """CPU time of this process, less what the benchmark's own bookkeeping took."""

    def __init__(self) -> None:
        self.own = 0.0

    def now(self) -> float:
        return time.process_time() - self.own

    def measuring(self) -> float:
        return time.process_time()

    def done_measuring(self, started: float) -> None:
        self.own += time.process_time() - started


async def run_session(wire: str, url: str, workspace: Path, calls: int) -> tuple[Timings, float]:
    """Drive one session of `calls` model calls; per-call figures and the wall time of the whole session."""
    import importlib

    from react_agent_mini.app import SessionOptions, build_session
    from react_agent_mini.compact.tokens import estimate_messages_tokens
    from react_agent_mini.config import ProviderConfig
    from react_agent_mini.events import ModelEvent
    from react_agent_mini.providers.base import ModelRequest

    if wire == "openai":
        config = ProviderConfig("openai", "deepseek-chat", base_url=url + "/v1", api_key=API_KEY, max_retries=0)
    else:
        config = ProviderConfig("anthropic", "claude-sonnet-4-5", base_url=url, api_key=API_KEY, max_retries=0)
    built = build_session(config, SessionOptions(workspace, max_turns=calls))
    session, provider = built.session, built.provider
    inner = session.deps.call_model
    clock = _Clock()
    timings = Timings()
    started_call: list[float] = []

    # Timed where the work happens, not done a second time: httpx's encoding of the body, the provider's
    # conversion of the messages.
    content: Any = importlib.import_module("httpx._content")  # where httpx encodes a JSON body
    real_dumps = content.json_dumps
    kind = type(provider)
    real_build = kind.build_body  # type: ignore[attr-defined]

    def timed_dumps(obj: Any, **kwargs: Any) -> str:
        began = time.process_time()
        text: str = real_dumps(obj, **kwargs)
        timings.serialise[-1] += time.process_time() - began
        timings.body_bytes[-1] += len(text)
        return text

    def timed_build(self: Any, request: ModelRequest) -> dict[str, Any]:
        began = time.process_time()
        body: dict[str, Any] = real_build(self, request)
        timings.convert[-1] += time.process_time() - began
        return body

    def call_model(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        now = clock.now()
        measuring = clock.measuring()
        if started_call:
            timings.total.append(now - started_call[-1])
        started_call.append(now)
        timings.serialise.append(0.0)
        timings.convert.append(0.0)
        timings.body_bytes.append(0)
        timings.messages.append(len(request.messages))
        timings.rss_kb.append(rss_kb()[0])
        clock.done_measuring(measuring)
        return inner(request)

    content.json_dumps = timed_dumps
    kind.build_body = timed_build  # type: ignore[attr-defined]
    session.deps = msgspec.structs.replace(session.deps, call_model=call_model)
    wall_start = time.perf_counter()
    try:
        async for _event in session.run_turn("Look through this repository: read, run and search as you go."):
            pass
        timings.total.append(clock.now() - started_call[-1])
        wall = time.perf_counter() - wall_start
        timings.context_tokens = estimate_messages_tokens(session.messages)
        timings.threshold_tokens = session.compact.threshold_tokens
    finally:
        content.json_dumps = real_dumps
        kind.build_body = real_build  # type: ignore[attr-defined]
        await provider.aclose()
        built.recorder.close()
    return timings, wall


def window(samples: Sequence[float], call: int) -> list[float]:
    """The samples of calls call-WINDOW .. call+WINDOW (1-based), clipped to the run."""
    low = max(0, call - 1 - WINDOW)
    return list(samples[low : min(len(samples), call + WINDOW)])


def median_at(samples: Sequence[float], call: int) -> float:
    return statistics.median(window(samples, call))


def report(timings: Timings, wall: float, calls: int, transcript: int, wire: str, results: str) -> None:
    made = len(timings.total)
    points = sorted({1, min(100, made), min(300, made), made})
    _rss, peak = rss_kb()
    ours = timings.ours
    print(
        f"long session: {made} model calls ({wire} wire, {results} results, loopback fake server in a child "
        f"process), python {sys.version.split()[0]}; CPU of this process per call, medians over calls n±{WINDOW}"
    )
    print(f"{'call':>6} {'ours':>10} {'(convert)':>10} {'serialise':>10} {'request':>9} {'messages':>9} {'RSS':>7}")
    for call in points:
        body = median_at([float(b) for b in timings.body_bytes], call)
        print(
            f"{call:>6} {fmt_seconds(median_at(ours, call)):>10} {fmt_seconds(median_at(timings.convert, call)):>10} "
            f"{fmt_seconds(median_at(timings.serialise, call)):>10} {body / 1000:>6.0f} KB "
            f"{timings.messages[call - 1]:>9} {timings.rss_kb[call - 1] / 1024:>4.0f} MB"
        )
    # Against call 100 (or the first), not call 1: the first call also pays for what is done once (lazy imports).
    base = points[1] if len(points) > 2 else points[0]
    first, last = median_at(ours, base), median_at(ours, made)
    ser_first, ser_last = median_at(timings.serialise, base), median_at(timings.serialise, made)
    print(f"ours, call {made} / call {base}: {last / first:.2f}×   serialise: {ser_last / ser_first:.2f}×")
    print(f"ours, all calls: total {fmt_seconds(sum(ours))}; serialise total {fmt_seconds(sum(timings.serialise))}")
    print(f"session wall time {fmt_seconds(wall)} (tools and the server included)")
    print(
        f"history at the end ~{timings.context_tokens:,} tokens; compaction makes room over "
        f"{timings.threshold_tokens:,}"
    )
    print(f"transcript {transcript / 1e6:.1f} MB; RSS peak {peak / 1024:.0f} MB")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.long_session", description=(__doc__ or "").partition("\n")[0]
    )
    parser.add_argument("--calls", type=int, default=300, metavar="N", help="model calls in the session (300)")
    parser.add_argument("--wire", choices=["openai", "anthropic"], default="openai")
    parser.add_argument(
        "--results",
        choices=["large", "small"],
        default="large",
        help="large: whole files and long outputs (compaction acts); small: a few lines (it never does)",
    )
    parser.add_argument("--save-transcript", type=Path, metavar="PATH", help="copy the session's transcript here")
    args = parser.parse_args(argv)
    calls = max(2, args.calls)
    if not shutil.which("seq"):
        raise SystemExit("needs seq on PATH")

    with tempfile.TemporaryDirectory(prefix="ram-long-") as tmp:
        work = Path(tmp)
        workspace = work / "ws"
        (workspace / "src").mkdir(parents=True)
        (workspace / "lib").mkdir()
        names: list[str] = []
        for i, source in enumerate(stdlib_files(calls // 2 + 1)):
            name = f"src/m{i:03d}_{source.name}"
            shutil.copyfile(source, workspace / name)
            names.append(name)
        for source in stdlib_files(GREP_FILES):
            shutil.copyfile(source, workspace / "lib" / source.name)
        # Sessions and settings live under the temporary directory, not the user's.
        os.environ["XDG_DATA_HOME"] = str(work / "data")
        os.environ["XDG_CONFIG_HOME"] = str(work / "config")
        for name in ("TRACE", "COMPACT", "COMPACT_THRESHOLD_CHARS", "AUTOCOMPACT", "MCP_CONFIG", "ALLOW_WRITE"):
            os.environ.pop(name, None)
        os.environ.pop("CONTEXT_WINDOW_TOKENS", None)
        if args.results == "small":
            os.environ.update(CONTEXT_WINDOW_TOKENS=SMALL_WINDOW_TOKENS, COMPACT_THRESHOLD_CHARS=SMALL_THRESHOLD_CHARS)
        server, url = start_server(tool_calls(calls, names, args.results), work)
        try:
            timings, wall = asyncio.run(run_session(args.wire, url, workspace, calls))
        finally:
            server.terminate()
            server.wait(timeout=10)
        transcripts = list((work / "data").rglob("*.jsonl"))
        size = sum(p.stat().st_size for p in transcripts)
        if args.save_transcript is not None and transcripts:
            shutil.copyfile(transcripts[0], args.save_transcript)
        report(timings, wall, calls, size, args.wire, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
