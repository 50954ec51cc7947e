"""What checkpoints add to a turn: the same tool calls through the real runner, with checkpoints on and off.

Each figure is one whole turn as the runner runs it (permission seam, the tool, the checkpoint observer):

* a turn of 5 Edits to a 20 KB file (the first Edit of the turn keeps the file's bytes; the rest only record
  what they left), without git;
* a turn of one Bash command that is not read-only (`touch`), in a plain folder (recorded as not covered) and in
  a git repository of 2,000 files in 200 directories, where the workspace is snapshotted into git's object store
  before and after the command through the private index (`git add -A`, `write-tree`, `diff-tree`);
* the same in a repository of 20,000 files.

Checkpoints off is `RAM_CHECKPOINTS=0` (no observer). The store's size after the runs is printed too.
Figures only. Run: `.venv/bin/python -m benchmarks.checkpoint_cost [--runs N]` from the repo root.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from react_agent_mini.abort import AbortSignal
from react_agent_mini.checkpoints.store import CheckpointStore
from react_agent_mini.checkpoints.tracker import Checkpoints
from react_agent_mini.messages import Message, ToolUseBlock, user_text
from react_agent_mini.permissions.policy import NO_INFO, Allow, Decision, ToolCallInfo
from react_agent_mini.tools.base import Tool, ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.bash import BashTool
from react_agent_mini.tools.builtin.edit import EditTool
from react_agent_mini.tools.builtin.read import ReadTool
from react_agent_mini.tools.runner import ToolRun, run_tool_calls

from ._stats import line, runs_from


async def _allow(tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Decision:
    return Allow()


class _Turns:
    def __init__(self, cwd: Path, store: Path | None) -> None:
        self.history: list[Message] = []
        observer = None
        if store is not None:
            kept = CheckpointStore(store)
            observer = Checkpoints(lambda: self.history, lambda: kept)
        self.store = store
        self.context = ToolContext(cwd=cwd, changes=observer)
        self.registry = ToolRegistry([ReadTool(), EditTool(), BashTool()])
        self.count = 0

    async def turn(self, calls: Sequence[tuple[str, dict[str, Any]]]) -> float:
        self.count += 1
        self.history.append(user_text(f"turn {self.count}", id=f"u{self.count}"))
        start = time.perf_counter()
        for number, (name, args) in enumerate(calls):
            use = ToolUseBlock(f"c{self.count}_{number}", name, args)
            async for _ in run_tool_calls([use], ToolRun(self.registry, self.context, _allow, AbortSignal())):
                pass
            self.history.append(Message("assistant", (use,), id=f"a{self.count}_{number}"))
        return time.perf_counter() - start


def _repository(root: Path, files: int) -> None:
    for index in range(files):
        folder = root / f"pkg{index % 200:03d}"
        folder.mkdir(exist_ok=True)
        (folder / f"mod{index:05d}.py").write_text(f"VALUE = {index}\n" + "# filler line\n" * 40)
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}  # fmt: skip
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


async def _edits(root: Path, runs: int, on: bool) -> tuple[list[float], int]:
    work = root / ("edits-on" if on else "edits-off")
    work.mkdir()
    target = work / "big.py"
    target.write_text("".join(f"value_{i} = {i}\n" for i in range(1400)))
    turns = _Turns(work, root / "edits.checkpoints" if on else None)
    await turns.turn([("Read", {"file_path": "big.py"})])
    samples = []
    for run in range(runs + 1):
        calls = [
            ("Edit", {"file_path": "big.py", "old_string": f"value_{i} = ", "new_string": f"value_{i}  = "})
            for i in range(run * 5, run * 5 + 5)
        ]
        took = await turns.turn(calls)
        if run:
            samples.append(took)
    return samples, _size(root / "edits.checkpoints") if on else 0


async def _commands(work: Path, store: Path, runs: int, on: bool) -> list[float]:
    turns = _Turns(work, store if on else None)
    samples = []
    for run in range(runs + 1):
        took = await turns.turn([("Bash", {"command": f"touch made-{on}-{run}.txt"})])
        if run:
            samples.append(took)
    return samples


async def _main(runs: int) -> None:
    with tempfile.TemporaryDirectory(prefix="ram-checkpoint-bench-") as scratch:
        root = Path(scratch)
        for on in (False, True):
            samples, size = await _edits(root, runs, on)
            note = f"checkpoints {'on' if on else 'off'}" + (f"; store {size / 1024:.0f} KB" if on else "")
            print(line("5 Edits of a 20 KB file, no git", samples, note, 44))
        plain = root / "plain"
        plain.mkdir()
        for on in (False, True):
            samples = await _commands(plain, root / "plain.checkpoints", runs, on)
            print(line("Bash touch, plain folder", samples, f"checkpoints {'on' if on else 'off'}", 44))
        for files in (2_000, 20_000):
            repo = root / f"repo{files}"
            repo.mkdir()
            _repository(repo, files)
            for on in (False, True):
                store = root / f"repo{files}.checkpoints"
                samples = await _commands(repo, store, runs, on)
                note = f"checkpoints {'on' if on else 'off'}" + (f"; store {_size(store) / 1024:.0f} KB" if on else "")
                print(line(f"Bash touch, git repo of {files:,} files", samples, note, 44))


def main(argv: Sequence[str] | None = None) -> int:
    runs = runs_from(argv, "benchmarks.checkpoint_cost", __doc__, 10)
    asyncio.run(_main(runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
