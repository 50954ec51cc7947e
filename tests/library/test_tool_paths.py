"""A function tool's path arguments, known from its declaration rather than guessed from their names: a read-only
tool given a path outside the workspace is asked for (denied without a `can_use_tool` callback), like Read outside
it — through the library's `Agent` against the loopback fake LLM.

Done when: `@tool(read_only=True) def list_files(directory: Path)` on `/etc` is denied without a callback and asked
with one, and runs unasked inside the workspace; `Path | None`, `list[Path]`, `os.PathLike` and `path_params=` are
paths too, whatever their names."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini import Agent, Allow, Deny, FunctionTool, PermissionAsked, tool

from ..fakes.fake_llm import FakeLLMServer, RecordedRequest, Reply, ToolCall

ran: list[str] = []
"""What the tools were called with, in order."""
HERE: list[Path] = []
"""The workspace of the running test (a function's relative path is relative to it, as for the built-in tools)."""


def _at(path: os.PathLike[str] | str) -> Path:
    return HERE[0] / path


@tool(read_only=True)
def list_files(directory: Path) -> list[str]:
    """List the files of a directory."""
    ran.append(str(directory))
    return sorted(p.name for p in _at(directory).iterdir())


@tool(read_only=True)
def sizes(files: list[Path], base: Path | None = None, also: os.PathLike[str] | None = None) -> int:
    """Add up the sizes of files."""
    ran.append(",".join(map(str, files)))
    return sum(_at(base or ".").joinpath(f).stat().st_size for f in files)


@tool(read_only=True, path_params=["where"])
def peek(where: str, label: str = "") -> str:
    """Show the start of a file (`where` is a path, though a str)."""
    ran.append(where)
    return _at(where).read_text()[:20]


@pytest.fixture(autouse=True)
def forget() -> None:
    ran.clear()


def connected(server: FakeLLMServer, cwd: Path, **options: Any) -> Agent:
    return Agent(cwd=cwd, base_url=server.openai_base_url, api_key="test-key", **options)


def tool_messages(request: RecordedRequest) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in request.body["messages"] if m["role"] == "tool"}


def test_the_tools_declare_which_arguments_are_paths() -> None:
    assert FunctionTool(list_files).path_fields == ("directory",)
    assert FunctionTool(sizes).path_fields == ("files", "base", "also")
    assert FunctionTool(peek).path_fields == ("where",)
    with pytest.raises(ValueError, match="path_params names 'nowhere', not a parameter of it"):
        FunctionTool(tool(path_params=["nowhere"])(_listing))


def _listing(directory: Path) -> None:
    """A function to mark wrongly."""


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "docs").mkdir(parents=True)
    (ws / "docs" / "a.md").write_text("inside\n")
    (tmp_path / "secret.txt").write_text("outside the workspace\n")
    HERE[:] = [ws]
    return ws


async def test_a_read_only_tool_on_etc_is_denied_without_a_callback(fake_llm: FakeLLMServer, workspace: Path) -> None:
    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("list_files", {"directory": "/etc"}, id="c1"),
                ToolCall("sizes", {"files": ["docs/a.md", "../secret.txt"]}, id="c2"),
                ToolCall("peek", {"where": "../secret.txt"}, id="c3"),
                ToolCall("list_files", {"directory": "docs"}, id="c4"),
            ]
        ),
        Reply(text="done"),
    )
    async with connected(fake_llm, workspace, tools=[list_files, sizes, peek]) as agent:
        await agent.run("look around")
    results = tool_messages(fake_llm.requests[1])
    assert results["c1"].startswith(
        "Error: Permission denied: list_files /etc (outside the workspace) needs approval (it reads outside the "
        "workspace), and this agent has no can_use_tool callback to ask."
    ), results["c1"]
    for call in ("c2", "c3"):
        assert "(it reads outside the workspace)" in results[call], results[call]
    assert results["c4"] == '["a.md"]'  # inside the workspace: no asking
    assert ran == ["docs"]  # nothing outside ran


async def test_with_a_callback_it_is_asked_and_runs_when_allowed(fake_llm: FakeLLMServer, workspace: Path) -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def can_use_tool(tool_name: str, tool_input: dict[str, Any]) -> Allow | Deny:
        asked.append((tool_name, tool_input))
        return Allow() if tool_input.get("directory") == "/etc" else Deny("not that one")

    fake_llm.enqueue(
        Reply(
            tool_calls=[
                ToolCall("list_files", {"directory": "/etc"}, id="c1"),
                ToolCall("list_files", {"directory": "docs"}, id="c2"),
                ToolCall("sizes", {"files": ["docs/a.md"], "also": "../secret.txt"}, id="c3"),
            ]
        ),
        Reply(text="done"),
    )
    async with connected(fake_llm, workspace, tools=[list_files, sizes], can_use_tool=can_use_tool) as agent:
        events = [event async for event in agent.stream("look around")]
    assert asked == [
        ("list_files", {"directory": "/etc"}),
        ("sizes", {"files": ["docs/a.md"], "also": "../secret.txt"}),
    ]
    results = tool_messages(fake_llm.requests[1])
    assert not results["c1"].startswith("Error") and results["c2"] == '["a.md"]'
    assert "not that one" in results["c3"]
    assert [(e.summary, e.reason) for e in events if isinstance(e, PermissionAsked)] == [
        ("list_files /etc (outside the workspace)", "it reads outside the workspace"),
        ("sizes docs/a.md (outside the workspace)", "it reads outside the workspace"),
    ]
    assert ran == ["/etc", "docs"]
