"""The question the runner asks before a call runs (may `tool` run with this input?) and the answers it acts on.

The runner is handed the answerer (`ToolRun.can_use_tool`) and never imports one. That keeps the permission
system a layer over the tools, as pydantic-ai's approval toolset wraps a toolset: `permissions.policy` imports
these types and answers the question (`PermissionPolicy`, `allow_read_only`), and the tools package imports
nothing from `permissions`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import Any, Literal, Protocol, TypeAlias

import msgspec

from .base import Tool


class Allow(msgspec.Struct, frozen=True):
    """Run the call."""

    updated_input: Mapping[str, Any] | None = None
    """Run it with this input instead of the model's (validated again); None: as the model sent it."""


class Deny(msgspec.Struct, frozen=True):
    """Do not run the call; `message` becomes its error tool_result."""

    message: str
    """What the model reads instead of the tool's output."""
    end_turn: bool = False
    """True when the user refused: the remaining calls are skipped and the turn ends."""


Decision: TypeAlias = Allow | Deny
HookPermission: TypeAlias = Literal["allow", "ask", ""]


class ToolCallInfo(msgspec.Struct, frozen=True):
    """What the runner knows about a call besides its tool and input."""

    tool_use_id: str = ""
    """The id of the tool_use being decided on (programs asked for permission need it)."""
    hook_permission: HookPermission = ""
    """A PreToolUse hook's verdict: `allow` (no asking; deny rules and plan mode still apply), `ask`, or none."""


NO_INFO = ToolCallInfo()


class CanUseTool(Protocol):
    """The permission decision for one call."""

    def __call__(self, tool: Tool, args: Mapping[str, Any], info: ToolCallInfo = NO_INFO, /) -> Awaitable[Decision]:
        """Allow or Deny `tool` with `args` (asking someone when needed)."""
        ...
