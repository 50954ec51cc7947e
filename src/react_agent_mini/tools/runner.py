"""Run the tool calls of one assistant message: every tool_use gets exactly one tool_result, in order.

For each call: known tool? arguments a JSON object? valid for the schema? permitted? then run it. Any failure
at any step is an error result the model can read, never an exception out of here. Consecutive
concurrency-safe calls run in parallel; the rest run one at a time. After an abort or a refusal that ends the
turn, calls that did not run get a "skipped" result.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import msgspec

from ..abort import Aborted, AbortSignal
from ..events import ToolFinished, ToolStarted
from ..messages import ToolResultBlock, ToolUseBlock
from ..permissions.policy import CanUseTool, Deny
from ..trace import trace
from .base import Tool, ToolContext, ToolInputError, ToolOutput, ToolRegistry

MAX_PARALLEL = 10
"""Concurrency-safe calls of one message run at most this many at a time (Claude Code's default is 10)."""

SKIPPED = "Skipped because a previous tool use was rejected or the turn was aborted."
INTERRUPTED = "Interrupted by the user before it finished."


class _Ready(msgspec.Struct):
    use: ToolUseBlock
    tool: Tool
    args: object


class ToolRun(msgspec.Struct):
    """Everything the runner needs besides the calls."""

    registry: ToolRegistry
    context: ToolContext
    can_use_tool: CanUseTool
    signal: AbortSignal
    end_turn: bool = False
    """Set when a refusal ended the turn; the loop stops after this batch."""


def _batches(uses: Sequence[ToolUseBlock], registry: ToolRegistry) -> list[list[ToolUseBlock]]:
    """Group consecutive concurrency-safe calls; everything else is a batch of one."""
    batches: list[list[ToolUseBlock]] = []
    previous_safe = False
    for use in uses:
        tool = registry.get(use.name)
        safe = tool is not None and tool.concurrency_safe
        if safe and previous_safe:
            batches[-1].append(use)
        else:
            batches.append([use])
        previous_safe = safe
    return batches


async def run_tool_calls(uses: Sequence[ToolUseBlock], run: ToolRun) -> AsyncIterator[ToolStarted | ToolFinished]:
    """Yield ToolStarted for each call as it is reached and exactly one ToolFinished per call."""
    for batch in _batches(uses, run.registry):
        ready: list[_Ready] = []
        for use in batch:
            yield ToolStarted(use)
            trace("tool.start", name=use.name, id=use.id)
            outcome = await _prepare(use, run)
            if isinstance(outcome, _Ready):
                ready.append(outcome)
            else:
                yield _finish(use, outcome)
        if len(ready) == 1:
            yield _finish(ready[0].use, await _execute(ready[0], run))
        elif ready:
            bound = asyncio.Semaphore(MAX_PARALLEL)
            for next_done in asyncio.as_completed([_execute_tagged(r, run, bound) for r in ready]):
                item, output = await next_done
                yield _finish(item.use, output)


def _finish(use: ToolUseBlock, output: ToolOutput) -> ToolFinished:
    trace("tool.end", name=use.name, id=use.id, ok=not output.is_error)
    result = ToolResultBlock(use.id, output.content, output.is_error, images=output.images)
    return ToolFinished(use, result, output.after, denied=output.denied)


async def _prepare(use: ToolUseBlock, run: ToolRun) -> _Ready | ToolOutput:
    if run.signal.aborted or run.end_turn:
        return ToolOutput(SKIPPED, is_error=True)
    tool = run.registry.get(use.name)
    if tool is None:
        available = ", ".join(run.registry.names()) or "(none)"
        return ToolOutput(f"Unknown tool: {use.name}. Available tools: {available}.", is_error=True)
    if use.input_error:
        return ToolOutput(f"Invalid input for {use.name}: {use.input_error}. Send the call again.", is_error=True)
    try:
        args = tool.validate(use.input)
    except ToolInputError as exc:
        return ToolOutput(f"Invalid input for {use.name}: {exc}", is_error=True)
    except Exception as exc:  # a validator bug must not break the conversation
        return ToolOutput(f"Invalid input for {use.name}: {type(exc).__name__}: {exc}", is_error=True)
    try:
        decision = await run.signal.race(run.can_use_tool(tool, use.input))
    except Aborted:
        return ToolOutput(SKIPPED, is_error=True)
    except Exception as exc:  # the input defeated the permission check: refuse, and say why
        return ToolOutput(
            f"Permission check failed for {use.name}: {type(exc).__name__}: {exc}. The call was not run.",
            is_error=True,
        )
    if isinstance(decision, Deny):
        run.end_turn = run.end_turn or decision.end_turn
        return ToolOutput(decision.message, is_error=True, denied=True)
    return _Ready(use, tool, args)


async def _execute_tagged(ready: _Ready, run: ToolRun, bound: asyncio.Semaphore) -> tuple[_Ready, ToolOutput]:
    async with bound:
        return ready, await _execute(ready, run)


async def _execute(ready: _Ready, run: ToolRun) -> ToolOutput:
    if run.signal.aborted or run.end_turn:
        return ToolOutput(SKIPPED, is_error=True)
    try:
        context = msgspec.structs.replace(run.context, call_id=ready.use.id)
        return await run.signal.race(ready.tool.call(ready.args, context))
    except Aborted:
        return ToolOutput(INTERRUPTED, is_error=True)
    except Exception as exc:  # a tool bug must not break the conversation
        return ToolOutput(f"{ready.use.name} failed: {type(exc).__name__}: {exc}", is_error=True)
