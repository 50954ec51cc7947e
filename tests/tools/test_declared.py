"""What a tool declares about itself (`tools/declared.py`): its family and what a call touches, read by the permission
policy, the sandbox masks and compaction instead of tables of tool names.

Done when: a read-only tool defined here with a `Path` parameter of any name (`directory: Path`) is asked for
outside the workspace (denied headless, with no one to ask), and runs unasked inside it; a `ModelTool` whose field
is typed as a `Path` declares it without saying so; the built-in tools declare their families; a Read deny rule
governs a tool of the `read` family whatever its name, and an Edit rule one of the `edit` family."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from react_agent_mini.builtin_tools import built_in_classes, family_named
from react_agent_mini.function_tools import FunctionTool, tool
from react_agent_mini.permissions.policy import Allow, Deny, PermissionPolicy, PermissionRequest
from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.tools.base import ModelTool, ToolContext, ToolOutput
from react_agent_mini.tools.declared import Touches, family_of, touches_of


@tool(read_only=True)
def survey(directory: Path, depth: int = 1) -> str:
    """List a directory."""
    return str(directory)


class SurveyArgs(msgspec.Struct):
    where: Path
    label: str = ""


class Survey(ModelTool[SurveyArgs]):
    """A tool of the read family that says nothing about its paths: its `Path` field says it."""

    name = "Survey"
    description = "survey"
    args_model = SurveyArgs
    read_only = True
    family = "read"

    async def call(self, args: SurveyArgs, ctx: ToolContext) -> ToolOutput:
        return ToolOutput(str(args.where))


class Scribble(ModelTool[SurveyArgs]):
    name = "Scribble"
    description = "scribble"
    args_model = SurveyArgs
    family = "edit"


def decide(policy: PermissionPolicy, used: Any, args: Mapping[str, Any]) -> Allow | Deny:
    return asyncio.run(policy.decide(used, args))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "docs").mkdir(parents=True)
    return root


def test_a_path_parameter_of_any_name_is_what_a_read_only_tool_reads() -> None:
    function = FunctionTool(survey)
    assert touches_of(function, {"directory": "/etc", "depth": 2}) == Touches(reads=("/etc",))
    assert Survey.path_fields == ("where",)  # from the field's type, not its name
    assert touches_of(Survey(), {"where": "docs"}) == Touches(reads=("docs",))
    assert touches_of(Scribble(), {"where": "docs"}) == Touches(writes=("docs",))


@pytest.mark.parametrize("used", [FunctionTool(survey), Survey()], ids=["function", "model tool"])
def test_outside_the_workspace_it_is_denied_headless_and_inside_it_runs(ws: Path, used: Any) -> None:
    field = "directory" if isinstance(used, FunctionTool) else "where"
    headless = PermissionPolicy(ws)
    denied = decide(headless, used, {field: "/etc"})
    assert isinstance(denied, Deny)
    assert "/etc (outside the workspace) needs approval (it reads outside the workspace)" in denied.message
    assert "headless mode cannot ask" in denied.message
    assert decide(headless, used, {field: "docs"}) == Allow()
    asked: list[PermissionRequest] = []

    async def asker(request: PermissionRequest) -> Any:
        asked.append(request)
        return "yes"

    assert decide(PermissionPolicy(ws, asker=asker), used, {field: "../../x"}) == Allow()
    assert [(r.reason, r.outside_workspace) for r in asked] == [("it reads outside the workspace", True)]


def test_rules_govern_tools_by_family_not_by_name(ws: Path) -> None:
    rules = RuleSet()
    assert rules.add("deny", "Read(./docs/**)", "test") is None
    assert rules.add("deny", "Edit(./docs/**)", "test") is None
    assert rules.evaluate(Survey(), {"where": "docs/a.md"}, root=ws) == "deny"
    assert rules.evaluate(Scribble(), {"where": "docs/a.md"}, root=ws) == "deny"
    assert rules.evaluate(FunctionTool(survey), {"directory": "docs/a.md"}, root=ws) is None  # family `other`


def test_the_built_in_tools_declare_their_families() -> None:
    families = {cls.name: family_of(cls) for cls in built_in_classes()}  # type: ignore[attr-defined]
    assert families == {
        "Read": "read", "Write": "edit", "Edit": "edit", "Glob": "search", "Grep": "search", "Bash": "shell",
        "BashOutput": "other", "KillShell": "other", "WebFetch": "network", "WebSearch": "network",
        "TodoWrite": "other", "Skill": "other", "Echo": "other",
    }  # fmt: skip
    assert family_named("Glob") == "search" and family_named("mcp__s__t") is None
