"""Per-call cost over one long session: does the loop's own work per model call grow with the history?

One headless-style session of N model calls (default 300) in-process, with the production assembly
(`build_session`: real OpenAI-compatible or Anthropic provider over httpx, retries, permission policy,
compaction, transcript on disk) against the loopback fake LLM server (`tests/fakes/fake_llm.py`) running in a
child process, so the server's parsing of every request body costs neither this process's CPU nor its memory.
The server answers each call with one tool call, round robin, all of them real and read-only: Read of a file
copied from the standard library (a different one each time, so no "unchanged" stubs), Bash (`seq 1 N`,
`ls -la`, `cat` of a file: up to Bash's 30,000-character cap), Grep (content mode). So the history and the
transcript grow by about 25 KB per call and reach several MB, as in a real long session.

Per call (timestamps taken in this process, tools' own run time excluded):

* ours — the agent's work: from the previous tool results to the model call (autocompact check, compaction
  stages ①–③, the request), the provider's message conversion (`build_body`), and the bookkeeping after the
  answer and after the tool (history, transcript line, context meter, "seen whole" ids, events);
* serialise — JSON-encoding the request body as httpx does: this part is inherently proportional to the
  request, which must be sent whole on every call (the wire formats are stateless). It is timed on its own,
  outside "ours", by encoding the body built for the same request once more.

Figures are medians over a window of calls around calls 1, 100 and 300 (±5 calls), the ratio of the late
window to the first, the request and transcript sizes, and the process's RSS at the end and its peak.
Deterministic input; timings on a shared machine are noisy, so read ratios within one run.
Run: `.venv/bin/python -m benchmarks.long_session [--calls 300] [--wire openai|anthropic]` from the repo root.
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
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import Any

import msgspec

from ._stats import fmt_seconds

API_KEY = "test-key"
WINDOW = 5
"""Calls on each side of a reported call that its median covers."""


def stdlib_files(count: int) -> list[Path]:
    """`count` standard-library modules of 8-200 KB, in a fixed order (Read takes whole files under 256 KB)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = sorted(p for p in root.glob("*.py") if 8_000 <= p.stat().st_size <= 200_000)
    if not found:
        raise SystemExit(f"no standard-library modules found under {root}")
    return [found[i % len(found)] for i in range(count)]


def tool_calls(calls: int, files: Sequence[str]) -> list[dict[str, Any]]:
    """The fake server's script: calls-1 tool calls (Read, Bash, Read, Grep, ...), then a final answer."""
    script: list[dict[str, Any]] = []
    reads = iter(files)
    for i in range(calls - 1):
        kind = i % 4
        if kind in (0, 2):
            call = {"name": "Read", "arguments": {"file_path": next(reads)}}
            text = "Reading it."
        elif kind == 1:
            commands = [f"seq 1 {5000 + 37 * i}", "ls -la src", f"cat {files[i % len(files)]}"]
            call = {"name": "Bash", "arguments": {"command": commands[(i // 4) % 3], "description": "look"}}
            text = "Running it."
        else:
            patterns = ["def [a-z_]+\\(self", "import ", "return None", "class [A-Z]"]
            call = {"name": "Grep", "arguments": {"pattern": patterns[(i // 4) % 4], "output_mode": "content"}}
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
    """Per-call samples in seconds (index 0 = call 1)."""

    ours: list[float] = msgspec.field(default_factory=list)
    before: list[float] = msgspec.field(default_factory=list)
    """Part of `ours`: from the previous tool results to the model call (autocompact check, stages ①–③)."""
    convert: list[float] = msgspec.field(default_factory=list)
    """Part of `ours`: the provider's `build_body` (message conversion)."""
    serialise: list[float] = msgspec.field(default_factory=list)
    body_bytes: list[int] = msgspec.field(default_factory=list)


async def run_session(wire: str, url: str, workspace: Path, calls: int) -> tuple[Timings, float]:
    """Drive one session of `calls` model calls; per-call timings and the wall time of the whole session."""
    from react_agent_mini.app import SessionOptions, build_session
    from react_agent_mini.config import ProviderConfig
    from react_agent_mini.events import ModelEvent, ModelResponse, ToolFinished, ToolResults, ToolStarted
    from react_agent_mini.providers.base import ModelRequest

    if wire == "openai":
        config = ProviderConfig("openai", "deepseek-chat", base_url=url + "/v1", api_key=API_KEY, max_retries=0)
    else:
        config = ProviderConfig("anthropic", "claude-sonnet-4-5", base_url=url, api_key=API_KEY, max_retries=0)
    built = build_session(config, SessionOptions(workspace, max_turns=calls))
    session, provider = built.session, built.provider
    build_body: Callable[[ModelRequest], dict[str, Any]] = provider.build_body  # type: ignore[attr-defined]
    inner = session.deps.call_model

    timings = Timings()
    marks: dict[str, float] = {}
    loop_part: list[float] = []  # per call: the loop's share before the call and after the answer

    def call_model(request: ModelRequest) -> AsyncGenerator[ModelEvent, None]:
        async def timed() -> AsyncGenerator[ModelEvent, None]:
            entered = time.perf_counter()
            before = entered - marks.pop("results", entered)  # previous results → this call (0 for the first)
            # Measured here and excluded from "ours": the provider does the same work again inside the call.
            body = build_body(request)
            built_at = time.perf_counter()
            data = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
            encoded_at = time.perf_counter()
            timings.serialise.append(encoded_at - built_at)
            timings.body_bytes.append(len(data))
            loop_part.append(before + (built_at - entered))
            timings.before.append(before)
            timings.convert.append(built_at - entered)
            del body, data
            async for event in inner(request):
                if isinstance(event, ModelResponse):
                    marks["response"] = time.perf_counter()
                yield event

        return timed()

    session.deps = msgspec.structs.replace(session.deps, call_model=call_model)
    started = time.perf_counter()
    try:
        async for event in session.run_turn("Look through this repository: read, run and search as you go."):
            now = time.perf_counter()
            if isinstance(event, ToolStarted) and "response" in marks:
                loop_part[-1] += now - marks.pop("response")  # answer → tool starts
            elif isinstance(event, ToolFinished):
                marks["finished"] = now
            elif isinstance(event, ToolResults):
                loop_part[-1] += now - marks.pop("finished", now)  # tool done → results in history and on disk
                marks["results"] = now
        wall = time.perf_counter() - started
    finally:
        await provider.aclose()
        built.recorder.close()
    timings.ours = loop_part
    return timings, wall


def window(samples: Sequence[float], call: int) -> list[float]:
    """The samples of calls call-WINDOW .. call+WINDOW (1-based), clipped to the run."""
    low = max(0, call - 1 - WINDOW)
    return list(samples[low : min(len(samples), call + WINDOW)])


def report(timings: Timings, wall: float, calls: int, transcript: int, wire: str) -> None:
    points = sorted({1, min(100, calls), calls})
    rss, peak = rss_kb()
    print(
        f"long session: {len(timings.ours)} model calls ({wire} wire, loopback fake server in a child process), "
        f"python {sys.version.split()[0]}; medians over calls n±{WINDOW}"
    )
    print(f"{'call':>6} {'ours':>10} {'(to call':>10} {'convert':>9} {'rest)':>9} {'serialise':>10} {'request':>9}")
    for call in points:
        ours = statistics.median(window(timings.ours, call))
        before = statistics.median(window(timings.before, call))
        convert = statistics.median(window(timings.convert, call))
        rest = [o - b - c for o, b, c in zip(timings.ours, timings.before, timings.convert, strict=True)]
        ser = statistics.median(window(timings.serialise, call))
        body = statistics.median(window([float(b) for b in timings.body_bytes], call))
        print(
            f"{call:>6} {fmt_seconds(ours):>10} {fmt_seconds(before):>10} {fmt_seconds(convert):>9} "
            f"{fmt_seconds(statistics.median(window(rest, call))):>9} {fmt_seconds(ser):>10} {body / 1000:>6.0f} KB"
        )
    first = statistics.median(window(timings.ours, 1))
    last = statistics.median(window(timings.ours, calls))
    ser_first = statistics.median(window(timings.serialise, 1))
    ser_last = statistics.median(window(timings.serialise, calls))
    ratios = f"ours, call {calls} / call 1: {last / first:.2f}×   serialise: {ser_last / ser_first:.2f}×"
    print(ratios)
    total_ours, total_serialise = fmt_seconds(sum(timings.ours)), fmt_seconds(sum(timings.serialise))
    print(f"ours, all calls: total {total_ours}; serialise total {total_serialise}")
    print(f"session wall time {fmt_seconds(wall)} (tools and the server included)")
    print(f"transcript {transcript / 1e6:.1f} MB; RSS at the end {rss / 1024:.0f} MB, peak {peak / 1024:.0f} MB")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.long_session", description=(__doc__ or "").partition("\n")[0]
    )
    parser.add_argument("--calls", type=int, default=300, metavar="N", help="model calls in the session (300)")
    parser.add_argument("--wire", choices=["openai", "anthropic"], default="openai")
    parser.add_argument("--save-transcript", type=Path, metavar="PATH", help="copy the session's transcript here")
    args = parser.parse_args(argv)
    calls = max(2, args.calls)
    if not shutil.which("seq"):
        raise SystemExit("needs seq on PATH")

    with tempfile.TemporaryDirectory(prefix="ram-long-") as tmp:
        work = Path(tmp)
        workspace = work / "ws"
        (workspace / "src").mkdir(parents=True)
        names: list[str] = []
        for i, source in enumerate(stdlib_files(calls // 2 + 1)):
            name = f"src/m{i:03d}_{source.name}"
            shutil.copyfile(source, workspace / name)
            names.append(name)
        # Sessions and settings live under the temporary directory, not the user's.
        os.environ["XDG_DATA_HOME"] = str(work / "data")
        os.environ["XDG_CONFIG_HOME"] = str(work / "config")
        for name in ("TRACE", "COMPACT", "COMPACT_THRESHOLD_CHARS", "AUTOCOMPACT", "MCP_CONFIG", "ALLOW_WRITE"):
            os.environ.pop(name, None)
        server, url = start_server(tool_calls(calls, names), work)
        try:
            timings, wall = asyncio.run(run_session(args.wire, url, workspace, calls))
        finally:
            server.terminate()
            server.wait(timeout=10)
        transcripts = list((work / "data").rglob("*.jsonl"))
        size = sum(p.stat().st_size for p in transcripts)
        if args.save_transcript is not None and transcripts:
            shutil.copyfile(transcripts[0], args.save_transcript)
        report(timings, wall, calls, size, args.wire)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
