"""Running a tool call under the session's `ChangeObserver` (its checkpoints): told before, told after.

An observer that fails costs nothing but its own bookkeeping: the call runs as if there were none.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .base import ToolContext


@contextlib.asynccontextmanager
async def observed(ctx: ToolContext, tool: str, args: Mapping[str, Any]) -> AsyncIterator[None]:
    """`async with observed(ctx, name, raw): await tool.call(...)`."""
    observer = ctx.changes
    token: object | None = None
    if observer is not None:
        try:
            token = await observer.before_call(tool, args, ctx)
        except Exception:
            token = None
    try:
        yield
    finally:
        if observer is not None and token is not None:
            with contextlib.suppress(Exception):
                await observer.after_call(token)
