"""Run the tool calls of one assistant message: every tool_use gets exactly one tool_result, in order.

For each call: known tool? arguments a JSON object? only fields the tool takes, valid for its schema? (What the
model is told when not, so its next try can be right: `call_errors.py`.) PreToolUse hooks (which may block it,
change its input, or allow or ask for it)? permitted (by the `CanUseTool` the run is handed: `approval.py`)? then
run it, and PostToolUse hooks (which may add to or replace what the model reads). Any failure at any step is an
error result the model can read, never an exception out of here. Consecutive concurrency-safe calls run in
parallel; the rest run one at a time. After an abort or a refusal that ends the turn, calls that did not run get
a "skipped" result.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from ..abort import Aborted, AbortSignal
from ..events import Notice, ToolFinished, ToolProgress, ToolStarted
from ..messages import ToolResultBlock, ToolUseBlock
from ..trace import trace
from . import call_errors
from .approval import Allow, CanUseTool, Deny, HookPermission, ToolCallInfo
from .base import Tool, ToolContext, ToolInputError, ToolOutput, ToolRegistry
from .observed import observed

if TYPE_CHECKING:
    from ..hooks import Hooks  # handed in by the session: the tools sit below the hooks

MAX_PARALLEL = 10
"""Concurrency-safe calls of one message run at most this many at a time (Claude Code's default is 10)."""

SKIPPED = "Skipped because a previous tool use was rejected or the turn was aborted."
INTERRUPTED = "Interrupted by the user before it finished."


class _Ready(msgspec.Struct):
    use: ToolUseBlock
    tool: Tool
    args: object
    raw: Mapping[str, Any]
    """The input it runs with (the model's, or what a hook or the permission answer put instead)."""
    context: tuple[str, ...] = ()
    """PreToolUse hooks' additional context, for after the result."""


class ToolRun(msgspec.Struct):
    """Everything the runner needs besides the calls."""

    registry: ToolRegistry
    context: ToolContext
    can_use_tool: CanUseTool
    signal: AbortSignal
    end_turn: bool = False
    """Set when a refusal ended the turn; the loop stops after this batch."""
    hooks: Hooks | None = None
    """PreToolUse / PostToolUse hooks (None: none registered)."""
    notices: list[str] = msgspec.field(default_factory=list)
    """Lines for the user from hooks, yielded as `Notice`s."""


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


async def run_tool_calls(
    uses: Sequence[ToolUseBlock], run: ToolRun
) -> AsyncGenerator[ToolStarted | ToolFinished | ToolProgress | Notice, None]:
    """Yield ToolStarted for each call as it is reached and exactly one ToolFinished per call (and a Notice for
    each line a hook has for the user, a ToolProgress for each event a running call reports)."""
    for batch in _batches(uses, run.registry):
        ready: list[_Ready] = []
        for use in batch:
            yield ToolStarted(use)
            trace("tool.start", name=use.name, id=use.id)
            outcome = await _prepare(use, run)
            for line in _drain(run):
                yield line
            if isinstance(outcome, _Ready):
                ready.append(outcome)
            else:
                yield _finish(use, outcome)
        if ready:
            async with contextlib.aclosing(_execute_all(ready, run)) as running:
                async for item in running:
                    yield item


async def _execute_all(ready: Sequence[_Ready], run: ToolRun) -> AsyncGenerator[ToolProgress | Notice | ToolFinished]:
    """Run the ready calls of one batch together (at most `MAX_PARALLEL` at a time); yield what they report while
    they run (`ToolProgress`), and each one's `ToolFinished` as it ends."""
    progress: asyncio.Queue[ToolProgress] = asyncio.Queue()
    bound = asyncio.Semaphore(MAX_PARALLEL)
    tasks = [asyncio.ensure_future(_execute_tagged(r, run, bound, progress)) for r in ready]
    pending = set(tasks)
    getter: asyncio.Future[ToolProgress] | None = None
    try:
        while pending:
            if getter is None:
                getter = asyncio.ensure_future(progress.get())
            waiting: set[asyncio.Future[Any]] = {getter, *pending}
            done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                yield getter.result()
                getter = None
            while not progress.empty():  # what a call reported comes before its result
                yield progress.get_nowait()
            for task in sorted(pending & done, key=tasks.index):
                pending.discard(task)
                item, output = task.result()
                for line in _drain(run):
                    yield line
                yield _finish(item.use, output)
    finally:  # cancelled, or closed before the batch finished: the calls still running stop too
        if getter is not None:
            getter.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _drain(run: ToolRun) -> list[Notice]:
    lines, run.notices = run.notices, []
    return [Notice(line) for line in lines]


def _finish(use: ToolUseBlock, output: ToolOutput) -> ToolFinished:
    trace("tool.end", name=use.name, id=use.id, ok=not output.is_error)
    result = ToolResultBlock(use.id, output.content, output.is_error, images=output.images, details=output.details)
    return ToolFinished(use, result, output.after, denied=output.denied)


async def _prepare(use: ToolUseBlock, run: ToolRun) -> _Ready | ToolOutput:
    if run.signal.aborted or run.end_turn:
        return ToolOutput(SKIPPED, is_error=True)
    tool = run.registry.get(use.name)
    if tool is None:
        return ToolOutput(call_errors.unknown_tool(use.name, run.registry.names(), use.input_error), is_error=True)
    if use.input_error:
        return ToolOutput(call_errors.unreadable_arguments(tool, use.name, use.input_error), is_error=True)
    if unknown := call_errors.unknown_fields(tool, use.input):  # the model's own mistake (not a hook's input)
        return ToolOutput(f"Invalid input for {use.name}: {unknown}", is_error=True)
    raw: Mapping[str, Any] = use.input
    args = _validated(tool, use.name, raw)
    if isinstance(args, ToolOutput):
        return args
    hook_permission: HookPermission = ""
    context: tuple[str, ...] = ()
    if run.hooks is not None and run.hooks.active("PreToolUse", use.name):
        fields = {"tool_name": use.name, "tool_input": dict(raw), "tool_use_id": use.id}
        try:
            verdict = await run.signal.race(run.hooks.run("PreToolUse", fields, use.name))
        except Aborted:
            return ToolOutput(SKIPPED, is_error=True)
        run.notices.extend(verdict.messages)
        if verdict.stop:
            run.end_turn = True
            run.notices.append(_stopped("PreToolUse", verdict.stop_reason))  # `stopReason` is for the user
            return ToolOutput(_stopped("PreToolUse", verdict.stop_reason), is_error=True)
        if verdict.block or verdict.permission == "deny":
            denial = verdict.permission_reason if verdict.permission == "deny" else ""
            why = " ".join(dict.fromkeys(r for r in (denial, *verdict.reasons) if r)) or "no reason given"
            return ToolOutput(f"Blocked by a PreToolUse hook: {why}", is_error=True)
        if verdict.updated_input is not None:
            raw = verdict.updated_input
            args = _validated(tool, use.name, raw, "the input a PreToolUse hook gave")
            if isinstance(args, ToolOutput):
                return args
        hook_permission = verdict.permission if verdict.permission in ("allow", "ask") else ""
        context = tuple(verdict.context)
    try:
        info = ToolCallInfo(use.id, hook_permission)
        decision = await run.signal.race(run.can_use_tool(tool, raw, info))
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
    if isinstance(decision, Allow) and decision.updated_input is not None:
        raw = decision.updated_input
        args = _validated(tool, use.name, raw, "the input the permission answer gave")
        if isinstance(args, ToolOutput):
            return args
    return _Ready(use, tool, args, raw, context)


def _validated(tool: Tool, name: str, raw: Mapping[str, Any], whose: str = "") -> object:
    """The tool's parsed arguments, or the error result saying why `raw` does not fit."""
    where = f" ({whose})" if whose else ""
    try:
        return tool.validate(raw)
    except ToolInputError as exc:
        return ToolOutput(f"Invalid input for {name}{where}: {exc}", is_error=True)
    except Exception as exc:  # a validator bug must not break the conversation
        return ToolOutput(f"Invalid input for {name}{where}: {type(exc).__name__}: {exc}", is_error=True)


def _stopped(event: str, reason: str) -> str:
    return f"Stopped by a {event} hook: {reason}" if reason else f"Stopped by a {event} hook."


async def _execute_tagged(
    ready: _Ready, run: ToolRun, bound: asyncio.Semaphore, progress: asyncio.Queue[ToolProgress]
) -> tuple[_Ready, ToolOutput]:
    async with bound:
        return ready, await _execute(ready, run, progress)


async def _execute(ready: _Ready, run: ToolRun, progress: asyncio.Queue[ToolProgress]) -> ToolOutput:
    if run.signal.aborted or run.end_turn:
        return ToolOutput(SKIPPED, is_error=True)
    use = ready.use

    def report(event: Any) -> None:
        progress.put_nowait(ToolProgress(use, event))

    notes: list[str] = []  # what the checkpoints could not keep (rewind will not cover it)
    try:
        context = msgspec.structs.replace(run.context, call_id=use.id, progress=report)
        async with observed(context, use.name, ready.raw, notes):  # checkpoints see what the call may change
            output = await run.signal.race(ready.tool.call(ready.args, context))
    except Aborted:
        return _noted(ToolOutput(INTERRUPTED, is_error=True), notes, run)
    except Exception as exc:  # a tool bug must not break the conversation
        return _noted(ToolOutput(f"{use.name} failed: {type(exc).__name__}: {exc}", is_error=True), notes, run)
    output = _noted(output, notes, run)
    if output.end_turn:
        run.end_turn = True
    if not output.is_error and run.hooks is not None and run.hooks.active("PostToolUse", ready.use.name):
        output = await _after_hooks(ready, output, run)
    if ready.context:
        output = msgspec.structs.replace(output, content=_with_context(output.content, ready.context))
    return output


async def _after_hooks(ready: _Ready, output: ToolOutput, run: ToolRun) -> ToolOutput:
    """PostToolUse: the hooks see the result and may replace it, add to it, or (block) tell the model why not."""
    assert run.hooks is not None
    fields = {
        "tool_name": ready.use.name,
        "tool_input": dict(ready.raw),
        "tool_use_id": ready.use.id,
        "tool_response": {"content": output.content, "is_error": output.is_error},
    }
    try:
        verdict = await run.signal.race(run.hooks.run("PostToolUse", fields, ready.use.name))
    except Aborted:
        return output  # the call ran; what it produced stays its result
    run.notices.extend(verdict.messages)
    if verdict.updated_output is not None:  # the hook's text is the result now: the data no longer describes it
        output = msgspec.structs.replace(output, details=None)
    content = output.content if verdict.updated_output is None else verdict.updated_output
    notes = list(verdict.context)
    if verdict.block:
        notes.append(f"A PostToolUse hook objects: {verdict.reason or 'no reason given'}")
    if verdict.stop:
        run.end_turn = True
        run.notices.append(_stopped("PostToolUse", verdict.stop_reason))
        notes.append(_stopped("PostToolUse", verdict.stop_reason))
    if notes:
        content = _with_context(content, tuple(notes))
    return msgspec.structs.replace(output, content=content)


def _noted(output: ToolOutput, notes: list[str], run: ToolRun) -> ToolOutput:
    """`notes` (what rewind will not cover) added to the result the model reads, and shown to the user."""
    if not notes:
        return output
    run.notices.extend(notes)
    return msgspec.structs.replace(output, content=_with_context(output.content, tuple(f"Note: {n}." for n in notes)))


def _with_context(content: str, notes: tuple[str, ...]) -> str:
    return "\n\n".join([content, *notes])
