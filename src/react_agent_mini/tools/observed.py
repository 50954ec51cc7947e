"""Running a tool call under the session's `ChangeObserver` (its checkpoints): told before, told after.

An observer that fails does not stop the call: it runs as if there were none, and what the observer says of its
failure (one line: what rewind will not cover) goes into `notes`, which the runner adds to the call's result and
shows the user.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from typing import Any

from .base import ToolContext


@contextlib.asynccontextmanager
async def observed(
    ctx: ToolContext, tool: str, args: Mapping[str, Any], notes: list[str] | None = None
) -> AsyncIterator[None]:
    """`async with observed(ctx, name, raw, notes): await tool.call(...)`."""
    observer = ctx.changes
    token: object | None = None
    if observer is not None:
        try:
            token = await observer.before_call(tool, args, ctx)
        except Exception as exc:
            token = None
            _note(notes, exc)
    try:
        yield
    finally:
        if observer is not None and token is not None:
            try:
                await observer.after_call(token)
            except Exception as exc:
                _note(notes, exc)


def _note(notes: list[str] | None, exc: Exception) -> None:
    if notes is not None:
        notes.append(str(exc) or type(exc).__name__)
