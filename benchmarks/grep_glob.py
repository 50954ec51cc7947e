"""Grep and Glob speed: the tools against ripgrep run by hand.

Grep searches the installed Python standard library (`sysconfig.get_paths()["stdlib"]`, site-packages
included) as the tool's workspace, for a few patterns and output modes. Each figure is the whole tool call
(spawning rg, reading its output, sorting, paging, rendering) against `rg --no-config <mode flag> <pattern>`
run directly in the same directory with its output captured, runs interleaved so both see the same machine
load. Target: the tool ≤ 1.2× rg alone (median).

Glob lists a generated tree of 50,000 files (a .gitignore prunes one tenth of it) in a temporary directory,
for a broad pattern, everything, a narrow deep one and a shallow one (`rg --files` with a depth limit and a
name prefilter, then our matching and ordering). Figures only; compare medians and minimums on a shared machine.
Run: `.venv/bin/python -m benchmarks.grep_glob [--runs N]` from the repo root.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from react_agent_mini.tools.base import ModelTool, ToolContext
from react_agent_mini.tools.builtin.glob import GlobTool
from react_agent_mini.tools.builtin.grep import GrepTool
from react_agent_mini.tools.builtin.ripgrep import find_rg

from ._stats import line

GREP_CASES: list[tuple[str, dict[str, Any], str]] = [
    ("files_with_matches 'import os'", {"pattern": "import os"}, "--files-with-matches"),
    ("content 'def ' (310k lines)", {"pattern": "def ", "output_mode": "content"}, "--line-number"),
    ("no match", {"pattern": "zq_never_here_qz"}, "--files-with-matches"),
]
GLOB_PATTERNS = ("**/*.py", "**/*", "pkg3/mod4/**/f1?.js", "pkg1/mod2/*/*.txt")
TREE_FILES = 50_000


async def call(tool: ModelTool[Any], raw: dict[str, Any], cwd: Path) -> float:
    """Seconds for one tool call (the output must not be an error)."""
    start = time.perf_counter()
    output = await tool.call(tool.validate(raw), ToolContext(cwd=cwd))
    elapsed = time.perf_counter() - start
    if output.is_error:
        raise SystemExit(f"{tool.name} failed: {output.content}")
    return elapsed


def run_rg(rg: str, flag: str, pattern: str, cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([rg, "--no-config", flag, "--regexp", pattern], cwd=cwd, capture_output=True, check=False)
    return time.perf_counter() - start


def make_tree(root: Path) -> None:
    """TREE_FILES empty files: pkg0..9/mod0..9/sub0..9/f0..49 with five extensions; pkg9/ is gitignored."""
    exts = (".py", ".txt", ".js", ".md", ".json")
    (root / ".gitignore").write_text("pkg9/\n*.tmp\n")
    per_dir = TREE_FILES // 1000
    for a in range(10):
        for b in range(10):
            for c in range(10):
                directory = root / f"pkg{a}" / f"mod{b}" / f"sub{c}"
                directory.mkdir(parents=True)
                for i in range(per_dir):
                    os.close(os.open(directory / f"f{i}{exts[i % 5]}", os.O_CREAT | os.O_WRONLY, 0o644))


async def bench_grep(rg: str, runs: int) -> None:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    tool = GrepTool()
    print(f"Grep over {stdlib} (the tool's workspace); {runs} runs each, interleaved with rg alone")
    for label, raw, flag in GREP_CASES:
        run_rg(rg, flag, raw["pattern"], stdlib)  # warm the page cache and rg's first start
        ours: list[float] = []
        alone: list[float] = []
        for _ in range(runs):
            alone.append(run_rg(rg, flag, raw["pattern"], stdlib))
            ours.append(await call(tool, raw, stdlib))
        ratio = statistics.median(ours) / statistics.median(alone)
        print(f"  {label}")
        print(line("    Grep tool", ours, f"{ratio:.2f}× rg median; target ≤ 1.2×", width=30))
        print(line(f"    rg {flag}", alone, width=30))


async def bench_glob(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ram-bench-glob-") as tmp:
        root = Path(tmp)
        start = time.perf_counter()
        make_tree(root)
        print(f"\nGlob over {TREE_FILES:,} generated files (made in {time.perf_counter() - start:.1f} s); {runs} runs")
        tool = GlobTool()
        for pattern in GLOB_PATTERNS:
            await call(tool, {"pattern": pattern}, root)  # warm-up
            samples = [await call(tool, {"pattern": pattern}, root) for _ in range(runs)]
            print(line(f"  {pattern:<22} Glob tool", samples, width=40))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5, metavar="N", help="measured runs per figure (default 5)")
    args = parser.parse_args(argv)
    runs = max(1, args.runs)
    rg = find_rg()
    if rg is None:
        print("rg not found: Grep and Glob need it (pip install ripgrep==14.1.0)", file=sys.stderr)
        return 1
    asyncio.run(bench_grep(rg, runs))
    asyncio.run(bench_glob(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
