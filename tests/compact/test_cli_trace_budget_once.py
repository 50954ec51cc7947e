"""Stage ① runs once per model call, and `TRACE=1` says so once: the context meter measures the history as
stage ① sends it right before the loop builds the request from the same history, and the stage used to run (and
print its `stage=budget` line) for each."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for, ram


@pytest.mark.parametrize("profile", ["seed", "v2"])
def test_one_budget_line_per_call(fake_llm: FakeLLMServer, tmp_path: Path, profile: str) -> None:
    # 2,000 lines of 45 characters: over the seed's 4,000-character cap and v2's fresh cap (15,360 tokens)
    (tmp_path / "big.py").write_text("".join(f"value_{n:05d} = compute({n}, {n + 1}, {n + 2})\n" for n in range(2000)))
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "big.py"})]),
        Reply(tool_calls=[ToolCall("Echo", {"message": "noted"})]),
        Reply(text="Read it."),
    )
    proc = ram("read big.py", env=env_for("openai", fake_llm, TRACE="1", COMPACT_PROFILE=profile), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("[trace] ")]
    calls = [i for i, line in enumerate(lines) if line.startswith("[trace] api.request ")]
    assert len(calls) == 3
    # the Read's result is cut in the second and the third request: one line each, before the request goes out
    budget = [i for i, line in enumerate(lines) if "stage=budget" in line]
    assert len(budget) == 2, budget
    assert calls[0] < budget[0] < calls[1] < budget[1] < calls[2]
    assert "truncatedBlocks=1" in lines[budget[0]] and "truncatedBlocks=1" in lines[budget[1]]
