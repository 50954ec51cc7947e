"""How big and how fast `ram view` is for a long session.

It makes a 1,000-call session (`--calls`) with the long-session benchmark (`benchmarks/long_session.py
--save-transcript`: the production assembly against the loopback fake server, every call a real Read, Bash or Grep
whose results compaction acts on), or takes one you give (`--transcript PATH`), then times `ram view PATH -o
FILE.html` in a fresh process each run and prints the page's size beside the transcript's, and the peak RSS.
PYTHONDONTWRITEBYTECODE is unset for the children, as installed ram runs.

Run: `.venv/bin/python -m benchmarks.view_size [--calls 1000] [--runs 5] [--transcript PATH]`
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from ._stats import line
from .usage_scan import RAM, measure


def long_session(calls: int, target: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.long_session", "--calls", str(calls), "--save-transcript", str(target)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0 or not target.is_file():
        raise SystemExit(f"benchmarks.long_session failed: {done.stderr[-2000:]}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.view_size", description=__doc__.partition("\n")[0])
    parser.add_argument("--calls", type=int, default=1000, metavar="N", help="model calls in the session (1000)")
    parser.add_argument("--runs", type=int, default=5, metavar="N", help="measured runs (5)")
    parser.add_argument("--transcript", type=Path, metavar="PATH", help="view this transcript instead of making one")
    args = parser.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    work = Path(tempfile.mkdtemp(prefix="ram-view-bench-"))
    try:
        source = args.transcript
        if source is None:
            source = work / "session.jsonl"
            long_session(max(2, args.calls), source, env)
        records = [json.loads(raw) for raw in source.read_text(encoding="utf-8", errors="replace").splitlines() if raw]
        calls = sum(1 for record in records if record.get("type") == "call")
        page = work / "session.html"
        times, peak = measure(RAM, ["view", str(source), "-o", str(page)], env, max(1, args.runs))
        size = page.stat().st_size
        print(f"transcript: {calls:,} model calls, {source.stat().st_size / 2**20:.1f} MB")
        print(f"page: {size / 2**20:.2f} MB ({size / max(1, calls) / 1024:.1f} KB per call)")
        print(line("ram view (write the page)", times, f"peak RSS {peak / 1024:.0f} MB"))
        base, _ = measure("pass", [], env, max(1, args.runs))
        print(line("python -c pass", base))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
