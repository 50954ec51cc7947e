"""`query()`: the ReAct loop. Think (call the model), act (run its tool calls), observe (append results), repeat.

Each iteration builds the outbound copy of the history through the compaction stages, streams one model call,
appends the assistant message, runs its tool calls and appends their results. It ends with a `Terminal` event:
`completed` (the model answered without tool calls), `max_turns`, `aborted` or `error` — unless a Stop hook
blocks the stop, whose reason then goes to the model as a user message and the loop goes on (at the turn limit,
such a block ends the run at `max_turns`: the work the hook asks for is not done). What a misbehaving model does is
watched in `model_faults/`: tool calls sent as text are read, an empty answer is asked for once more, a call the
output limit cut is answered without running, and the same call made again and again stops the run (or, in the
REPL, is asked about). Everything with a side effect arrives through `QueryDeps`, so tests can drive the loop with
fakes and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Literal

import msgspec

from .abort import Aborted, AbortSignal
from .compact.common import whole_ids
from .compact.pipeline import (
    CompactOptions,
    apply_retain_tail_if_needed,
    apply_tool_result_budget,
    microcompact_messages,
)
from .events import (
    AssistantTurn,
    Compacted,
    Followup,
    ModelEvent,
    ModelResponse,
    Notice,
    QueryEvent,
    Terminal,
    TerminalReason,
    ToolFinished,
    ToolResults,
)
from .hooks import Hooks
from .messages import ContentBlock, Message, ToolResultBlock, ToolUseBlock, user_text
from .model_faults import empty_answer
from .model_faults.doom_loop import Confirm
from .model_faults.watch import Watch
from .permissions.policy import CanUseTool, allow_read_only
from .providers.base import CallModel, ModelRequest
from .providers.errors import ContextTooLong, ProviderError
from .tools.base import ToolContext, ToolRegistry
from .tools.runner import ToolRun, run_tool_calls
from .tools.spec import ToolSpec
from .trace import trace

CUT_TEXT_NOTICE = "The response was cut off by the output token limit."

Microcompact = Callable[[Sequence[Message], CompactOptions], Sequence[Message]]
Autocompact = Callable[[Sequence[Message], str, Sequence[ToolSpec]], Awaitable[Compacted | None]]
"""Given the history, the system prompt and the tools of the next request: a summary to use instead, or None."""


def _new_id() -> str:
    return os.urandom(16).hex()  # random 128-bit id, as uuid4().hex, without importing uuid


class QueryDeps(msgspec.Struct):
    """Every side effect the loop has, injected."""

    call_model: CallModel
    """Streams one model call (production: the provider wrapped in retries)."""
    can_use_tool: CanUseTool = allow_read_only
    """Permission decision for each tool call."""
    microcompact: Microcompact = microcompact_messages
    """Stage ② of the compaction pipeline."""
    clock: Callable[[], float] = time.monotonic
    """Seconds, for timings."""
    new_id: Callable[[], str] = _new_id
    """Ids for the messages the loop creates."""
    autocompact: Autocompact | None = None
    """Asked before every model call whether an LLM summary should rewrite the history (the session's)."""
    hooks: Hooks | None = None
    """PreToolUse / PostToolUse / Stop hooks (the session runs UserPromptSubmit)."""
    stop_event: Literal["Stop", "SubagentStop"] = "Stop"
    """The hook event run when the model stops (a subagent's loop runs SubagentStop)."""
    confirm_repeat: Confirm | None = None
    """Asked whether to let the model go on making the same call again and again (the REPL's question); None:
    nobody can answer, and such a run stops (`model_faults/doom_loop.py`)."""


class QueryParams(msgspec.Struct):
    """What one run of the loop works on."""

    messages: Sequence[Message]
    """History so far, ending with the user's message; the loop works on its own copy."""
    tools: ToolRegistry
    context: ToolContext
    system: str = ""
    max_turns: int = 20
    """Model calls allowed in this run."""
    compact: CompactOptions = msgspec.field(default_factory=CompactOptions)
    signal: AbortSignal = msgspec.field(default_factory=AbortSignal)
    max_tokens: int | None = None
    """Output limit per call (None = the provider's default)."""


def build_outbound(messages: Sequence[Message], options: CompactOptions, deps: QueryDeps) -> Sequence[Message]:
    """① budget → ② microcompact → ③ retain tail, on a copy; the history itself is never changed."""
    if not options.enabled:
        return messages
    outbound = apply_tool_result_budget(messages, options)
    outbound = deps.microcompact(outbound, options)
    return apply_retain_tail_if_needed(outbound, options)


async def query(params: QueryParams, deps: QueryDeps) -> AsyncGenerator[QueryEvent, None]:
    """Run the loop; the last event is always a `Terminal`."""
    messages = list(params.messages)
    run = ToolRun(params.tools, params.context, deps.can_use_tool, params.signal, hooks=deps.hooks)
    watch = Watch(params.tools, deps.new_id)  # what a misbehaving model does: `model_faults/`
    turn = 0
    stop_hook_active = False
    resend: ModelRequest | None = None

    def end(reason: TerminalReason, error: str = "", context_limit: int | None = None) -> Terminal:
        trace("query.turn_end", reason=reason, turn=turn)
        return Terminal(reason, turn, error, context_limit)

    while True:
        turn += 1
        trace("query.turn_start", turn=turn)
        if resend is not None:  # the model's answer was empty: the very same request once more
            request, resend = resend, None
        else:
            autocompact = deps.autocompact
            if (
                autocompact is not None
                and (compacted := await autocompact(tuple(messages), params.system, params.tools.specs())) is not None
            ):
                messages = list(compacted.messages)
                yield compacted
            outbound = build_outbound(tuple(messages), params.compact, deps)  # a snapshot: `messages` grows
            request = ModelRequest(params.system, outbound, params.tools.specs(), params.max_tokens)
        response: ModelResponse | None = None
        try:
            async with contextlib.aclosing(_until_aborted(deps.call_model(request), params.signal)) as stream:
                async for event in stream:  # closed with the loop: the stream is closed then, not when collected
                    if isinstance(event, ModelResponse):
                        response = event
                    else:
                        yield event
        except Aborted:
            yield end("aborted")
            return
        except ContextTooLong as exc:
            yield end("error", exc.message, exc.limit_tokens or 0)
            return
        except ProviderError as exc:
            yield msgspec.structs.replace(end("error", exc.message), configuration=exc.configuration)
            return
        if response is None:
            yield end("error", "the model stream ended without a response")
            return

        response, told = watch.answer(response)  # tool calls the server sent as text, read
        assistant = msgspec.structs.replace(response.message, id=deps.new_id())
        if watch.ask_again(response, can=turn < params.max_turns):  # an empty answer: kept out of the history
            yield AssistantTurn(assistant, response.stop_reason, response.usage, request, kept=False)
            yield empty_answer.retry(assistant)
            resend = request
            continue
        messages.append(assistant)
        yield AssistantTurn(assistant, response.stop_reason, response.usage, request)
        if told:
            yield Notice(told)
        uses = assistant.tool_uses
        if not uses:
            if empty_answer.is_empty(assistant):
                yield end("error", watch.empty_failure(response, request))
                return
            if response.stop_reason == "max_tokens":
                yield Notice(CUT_TEXT_NOTICE)
            elif deps.hooks is not None and deps.hooks.active(deps.stop_event):
                fields = {"stop_hook_active": stop_hook_active}
                try:
                    verdict = await params.signal.race(deps.hooks.run(deps.stop_event, fields))
                except Aborted:
                    yield end("aborted")
                    return
                for line in verdict.messages:
                    yield Notice(line)
                if verdict.block and not verdict.stop:  # the hook wants more work: its reason is the next prompt
                    if turn >= params.max_turns:  # and there is no call left to do it with: not completed
                        yield end("max_turns")
                        return
                    stop_hook_active = True
                    reason = verdict.reason or f"A {deps.stop_event} hook asked you to continue."
                    followup = user_text(f"{deps.stop_event} hook feedback: {reason}", meta=True, id=deps.new_id())
                    messages.append(followup)
                    yield Followup(followup)
                    continue
            yield end("completed")
            return

        run.context = msgspec.structs.replace(params.context, whole_results=whole_result_ids(messages, outbound))
        gate = await watch.gate(uses, response, request, deps.confirm_repeat, params.signal)  # cut or repeated calls
        for line in gate.notices:
            yield Notice(line)
        # Results are kept by the call's position, not its id: two calls with one id must not share a result.
        results: list[ToolResultBlock | None] = [gate.decided.get(i) for i in range(len(uses))]
        after: list[ContentBlock] = []
        async with contextlib.aclosing(run_tool_calls(gate.run, run)) as tool_events:
            async for tool_event in tool_events:  # closed with the loop: calls still running stop
                yield tool_event
                if isinstance(tool_event, ToolFinished):
                    if (index := _position(uses, results, tool_event.tool_use)) is not None:
                        results[index] = tool_event.result
                    after.extend(tool_event.after)

        answer = Message("user", (*_in_order(uses, results), *after), id=deps.new_id())
        messages.append(answer)
        yield ToolResults(answer)
        watch.after(uses, answer.tool_results)

        if gate.stop:  # the model repeated a call, and nobody let it go on
            yield end("aborted", gate.stop)
            return
        if params.signal.aborted or run.end_turn:
            yield end("aborted")
            return
        if turn >= params.max_turns:
            yield end("max_turns")
            return


def whole_result_ids(history: Sequence[Message], outbound: Sequence[Message]) -> frozenset[str]:
    """Tool results the model received unchanged: the compaction stages hand back untouched blocks as is.

    An id that also answers a result the model did not get whole (a server that reused an id in a turn since
    dropped from the request) is left out: a Read stub must never point at content the model no longer has."""
    return whole_ids(history, outbound)  # continued from the last call's: this runs every call


def _position(uses: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock | None], use: ToolUseBlock) -> int | None:
    """Where a finished call stands among `uses` (the runner hands back the very block it was given)."""
    return next((i for i, candidate in enumerate(uses) if candidate is use and results[i] is None), None)


def _in_order(uses: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock | None]) -> list[ToolResultBlock]:
    """One result per call, in call order (a missing one would be a runner bug; answer it anyway)."""
    return [
        result or ToolResultBlock(use.id, "No result was produced for this call.", is_error=True)
        for use, result in zip(uses, results, strict=True)
    ]


async def _until_aborted(events: AsyncIterator[ModelEvent], signal: AbortSignal) -> AsyncGenerator[ModelEvent, None]:
    """Pass events through; when the signal fires, cancel the pending read and raise Aborted."""
    try:
        while True:
            has_item, item = await signal.race(_next(events))
            if not has_item:
                return
            assert item is not None
            yield item
    finally:
        closer: Any = getattr(events, "aclose", None)
        if closer is not None:
            with contextlib.suppress(Exception):  # a stream closed mid-read may complain; nothing is left to keep
                await closer()


async def _next(events: AsyncIterator[ModelEvent]) -> tuple[bool, ModelEvent | None]:
    try:
        return True, await anext(events)
    except StopAsyncIteration:
        return False, None
