"""The one decision every tool call passes through before it runs: allow, or deny with a reason.

This foundation policy allows read-only tools and denies everything else with a message the model can read;
the permissions issue replaces it with rules, workspace confinement and interactive asking behind the same
`CanUseTool` signature.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeAlias

import msgspec

from ..tools.base import Tool


class Allow(msgspec.Struct, frozen=True):
    """Run the call."""


class Deny(msgspec.Struct, frozen=True):
    """Do not run the call; `message` becomes its error tool_result."""

    message: str
    end_turn: bool = False
    """True when the user refused: the remaining calls are skipped and the turn ends."""


Decision: TypeAlias = Allow | Deny
CanUseTool: TypeAlias = Callable[[Tool, Mapping[str, Any]], Awaitable[Decision]]

NOT_READ_ONLY = (
    "Permission denied: {name} can change files or run commands, and this session allows only read-only tools."
)


async def allow_read_only(tool: Tool, args: Mapping[str, Any]) -> Decision:
    """Allow read-only tools; deny the rest."""
    if tool.read_only:
        return Allow()
    return Deny(NOT_READ_ONLY.format(name=tool.name))
