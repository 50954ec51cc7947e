"""`ram usage` and `ram view` cost nothing to the rest of ram: `ram --version` and a headless run (with a tool call
and a saved transcript) import none of their modules, which `ram usage` and `ram view` themselves do import (so
the check can tell). Imports are read from `python -X importtime`, in a real subprocess."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import env_for
from ..test_start_up_cost import importtime_stderr, module_names

OURS = ("react_agent_mini.usage", "react_agent_mini.view")


def imported(*args: str, env: dict[str, str], cwd: Path) -> set[str]:
    return set(module_names(importtime_stderr(*args, cwd=cwd, env=env)))


def ours(modules: set[str]) -> set[str]:
    return {name for name in modules if name.startswith(OURS)}


def test_start_up_and_a_headless_run_load_nothing_of_usage_or_view(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    assert ours(imported("--version", env=env_for(None, None), cwd=tmp_path)) == set()
    (tmp_path / "a.txt").write_text("a\n")
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})]), Reply(text="Read."))
    headless = imported("read a.txt", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert "react_agent_mini.recorder" in headless  # the run did save its transcript
    assert ours(headless) == set()
    assert "react_agent_mini.usage.scan" in imported("usage", "--json", env=env_for(None, None), cwd=tmp_path)
    page = tmp_path / "page.html"
    viewing = imported("view", "-o", str(page), env=env_for(None, None), cwd=tmp_path)
    assert {"react_agent_mini.view.reading", "react_agent_mini.view.session_page"} <= viewing
