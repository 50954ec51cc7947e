"""What one run of the loop watches for in the model's answers, in the order the loop meets it.

1. tool calls the server sent as answer text (`text_tool_calls`): read into tool_use blocks;
2. an empty answer (`empty_answer`): the same request once more, then an error;
3. before the calls run: a call the output limit cut (`cut_calls`) is answered without running, and a call repeated
   again and again (`doom_loop`) is asked about or ends the run.

Calls to tools that do not exist and arguments that do not fit are the runner's to answer (`tools/call_errors.py`):
they are mistakes of one call, not of the answer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from ..abort import Aborted, AbortSignal
from ..events import ModelResponse
from ..messages import ToolResultBlock, ToolUseBlock
from ..providers.base import ModelRequest
from ..tools.base import ToolRegistry
from ..tools.runner import SKIPPED
from . import empty_answer, text_tool_calls
from .cut_calls import cut_call, cut_notice, cut_result
from .doom_loop import Confirm, RepeatGuard


class Gate(msgspec.Struct):
    """What happens to the calls of one message before the runner sees them."""

    run: Sequence[ToolUseBlock]
    """The calls to hand to the runner (in order: the message's first ones)."""
    decided: dict[int, ToolResultBlock] = msgspec.field(default_factory=dict)
    """Results given without running, by the call's position."""
    notices: list[str] = msgspec.field(default_factory=list)
    """Lines for the user."""
    stop: str = ""
    """When set, the run ends after these results, stopped with this line."""


class Watch:
    """One run's watch over the model's answers (its state: the repeats so far, whether an empty answer was just
    asked again, which text-call formats were explained)."""

    def __init__(self, tools: ToolRegistry, new_id: Callable[[], str]) -> None:
        self.tools = tools
        self.new_id = new_id
        self.repeats = RepeatGuard(tools)
        self._asked_again = False
        self._told: set[str] = set()

    def answer(self, response: ModelResponse) -> tuple[ModelResponse, str]:
        """`response` with the tool calls its text holds read into tool calls, and a line for the user the first
        time in the run a server's parser is found off ("" otherwise)."""
        lifted = text_tool_calls.lift(response.message, self.tools, self.new_id)
        if lifted is None:
            return response, ""
        message, line = lifted
        told = "" if line in self._told else line
        self._told.add(line)
        if message.tool_uses:  # cut by the output limit stays cut: its last call may be incomplete
            stop = "max_tokens" if response.stop_reason == "max_tokens" else "tool_use"
            response = msgspec.structs.replace(response, message=message, stop_reason=stop)
        return response, told

    def ask_again(self, response: ModelResponse, *, can: bool) -> bool:
        """True when the answer is empty and is to be asked for once more (`can`: a model call is left)."""
        if not empty_answer.is_empty(response.message):
            self._asked_again = False
            return False
        if self._asked_again or not can:
            return False
        self._asked_again = True
        return True

    def empty_failure(self, response: ModelResponse, request: ModelRequest) -> str:
        """The error for an empty answer that was not asked for again."""
        limit = output_limit(request, response)
        return empty_answer.failure(response.message, response.stop_reason, limit, twice=self._asked_again)

    async def gate(
        self,
        uses: Sequence[ToolUseBlock],
        response: ModelResponse,
        request: ModelRequest,
        confirm: Confirm | None,
        signal: AbortSignal,
    ) -> Gate:
        """Before the calls of one message run: which run, which are answered as they are, and whether the run
        ends after them (a repeated call nobody let go on)."""
        repeated = self.repeats.check(uses)
        if repeated is not None:
            go_on = False
            if confirm is not None:
                try:
                    go_on = await signal.race(confirm(repeated))
                except Aborted:
                    return Gate((), {i: ToolResultBlock(u.id, SKIPPED, is_error=True) for i, u in enumerate(uses)})
                except Exception:  # the question failed: nobody said to go on
                    go_on = False
            if go_on:
                self.repeats.forgive(repeated)
            else:
                results = {i: ToolResultBlock(u.id, SKIPPED, is_error=True) for i, u in enumerate(uses)}
                results[repeated.index] = ToolResultBlock(repeated.use.id, repeated.result(confirm is not None), True)
                return Gate((), results, stop=repeated.stopped)
        cut = cut_call(uses, response.stop_reason)
        if cut is None:
            return Gate(uses)
        limit = output_limit(request, response)
        decided = {len(uses) - 1: ToolResultBlock(cut.id, cut_result(cut, limit), is_error=True)}
        return Gate(uses[:-1], decided, [cut_notice(cut, limit)])

    def after(self, uses: Sequence[ToolUseBlock], results: Sequence[ToolResultBlock]) -> None:
        """The calls of one message were answered."""
        self.repeats.observe(uses, results)


def output_limit(request: ModelRequest, response: ModelResponse) -> int | None:
    """The output token limit a response stopped at: the request's, else what the model produced (the provider's
    default, reached)."""
    return request.max_tokens or response.usage.output_tokens or None
