"""A conversation over many turns (the QueryEngine): history, usage, and the abort switch of the running turn.

`run_turn` appends the user's message, runs `query()` over the whole history and appends every message the
loop produces as it is produced, so an interrupted turn still leaves a valid history. The system prompt is
fixed at construction and survives `clear()`.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from .abort import Aborted, AbortSignal
from .compact import hook_context
from .compact.controller import Compaction
from .compact.pipeline import CompactOptions
from .events import AssistantTurn, Compacted, Followup, Notice, QueryEvent, Terminal, ToolProgress, ToolResults
from .ids import new_uuid
from .loop import QueryDeps, QueryParams, query
from .messages import Message, Usage, user_text
from .providers.errors import with_hint
from .tools.base import ToolContext, ToolRegistry

if TYPE_CHECKING:
    from .compact.meter import ContextReading


FITTING_CHARS_PER_TOKEN = 2
"""After a refusal that states the window: the outbound pipeline's threshold becomes this many characters per
token of it (about half the window for code and English, so the retry has room for the answer)."""


class SessionTotals(msgspec.Struct):
    """Running totals over the session."""

    usage: Usage = msgspec.field(default_factory=Usage)
    """Summed token usage of every model call, the summary calls of compaction and subagents' calls included."""
    model_calls: int = 0
    """Model calls made, the summary calls and subagents' calls included."""
    last_usage: Usage | None = None
    """Usage of the most recent model call (its input size is the context in use)."""


class Session:
    """Multi-turn state over `query()`."""

    def __init__(
        self,
        *,
        deps: QueryDeps,
        tools: ToolRegistry,
        context: ToolContext,
        system_prompt: str = "",
        max_turns: int = 20,
        compact: CompactOptions | None = None,
        max_tokens: int | None = None,
        session_id: str = "",
        refresh_system_prompt: Callable[[], str | None] | None = None,
        on_message: Callable[[Message], None] | None = None,
        compaction: Compaction | None = None,
    ) -> None:
        self.compaction = compaction or Compaction(deps.call_model, options=compact)
        """The context meter and autocompact (breaker and thrash guard live as long as the session)."""
        if deps.autocompact is None:
            deps = msgspec.structs.replace(deps, autocompact=self.compaction.maybe)
        self.deps = deps
        self.tools = tools
        self.context = context
        self.system_prompt = system_prompt
        self.max_turns = max_turns
        self.compact = compact or self.compaction.options
        self.max_tokens = max_tokens
        self.session_id = session_id or new_uuid()
        self.refresh_system_prompt = refresh_system_prompt
        """Asked before each turn; a string replaces the system prompt (e.g. the memory file changed)."""
        self.on_message = on_message
        """Told of every message as it joins the history (the transcript writes it to disk at once)."""
        self.on_rewrite: Callable[[Sequence[Message]], None] | None = None
        """Told when a summary replaced the history (the transcript records a boundary)."""
        self.on_call: Callable[[Usage, AssistantTurn | None], None] | None = None
        """Told of each model call as it ends: its usage, and the loop's event (None for a summary's side call);
        the transcript records it. A subagent's calls are in its own transcript."""
        self.messages: list[Message] = []
        self.totals = SessionTotals()
        self.compaction.on_usage = self._count_summary_call
        self._signal: AbortSignal | None = None
        if deps.hooks is not None:  # what a hook says enters the history cut to its share of this model's window
            deps.hooks.text_tokens = self._hook_text_tokens

    def _hook_text_tokens(self) -> int:
        return hook_context.budget_tokens(self.compaction.window)

    @property
    def turn_in_progress(self) -> bool:
        return self._signal is not None

    async def run_turn(
        self, text: str, *, inject_before: Sequence[Message] = (), typed: str = ""
    ) -> AsyncGenerator[QueryEvent, None]:
        """Append `inject_before` then the user's text, and run the loop; yields its events. `typed`: what the user
        typed when `text` is what it expanded to (a custom command), kept on the message (`Message.typed`)."""
        if self._signal is not None:
            raise RuntimeError("a turn is already running")
        new = list(inject_before)
        if not text.strip() and not new:
            raise ValueError("run_turn needs text or inject_before")
        self._signal = signal = AbortSignal()  # running from here: Ctrl+C reaches its prompt hook, no 2nd turn starts
        try:
            if text.strip():
                said, context = await self._prompt_hook(text, signal)
                for line in said:
                    yield line
                if context is None:  # the prompt is not sent
                    return
                new += [*context, user_text(text, id=self.deps.new_id(), typed=typed)]
            if self.refresh_system_prompt is not None and (fresh := self.refresh_system_prompt()) is not None:
                self.system_prompt = fresh
            for message in new:
                self._append(message)
            retried = False
            while True:
                terminal: Terminal | None = None
                # closing this turn early closes the loop at once, and with it the tools it runs and the stream
                async with contextlib.aclosing(query(self._params(signal), self.deps)) as events:
                    async for event in events:
                        if isinstance(event, AssistantTurn):
                            if event.kept:  # not an empty answer the loop asks for again
                                self._append(event.message)
                            if self.on_call is not None:
                                self.on_call(event.usage, event)
                            self.compaction.observe(event.usage, self.messages)
                            self.totals.usage += event.usage
                            self.totals.last_usage = event.usage
                            self.totals.model_calls += 1
                        elif isinstance(event, (ToolResults, Followup)):
                            self._append(event.message)
                        elif isinstance(event, Compacted):
                            self._rewrite(event.messages)
                        elif isinstance(event, ToolProgress) and isinstance(event.event, AssistantTurn):
                            self.totals.usage += event.event.usage  # a subagent's call costs as ours do
                            self.totals.model_calls += 1
                        if isinstance(event, Terminal):
                            terminal = event
                            break
                        yield event
                if terminal is None:  # query() always ends with a Terminal
                    return
                if terminal.context_limit is None or retried or not self.compact.enabled:
                    yield self._explained(terminal)
                    return
                # The model refused the request as longer than its window: learn the window it stated, summarise
                # the older history (as /compact does), and try once more.
                retried = True
                recovered = await self._fit_window(terminal.context_limit, signal)
                if recovered is None:
                    yield self._explained(terminal)
                    return
                yield recovered
        finally:
            self._signal = None

    async def _prompt_hook(
        self, text: str, signal: AbortSignal
    ) -> tuple[list[Notice | Terminal], list[Message] | None]:
        """UserPromptSubmit: what to tell the user, and the context to put before the prompt — None when the prompt
        is not sent (a hook blocked or stopped it, or the turn was interrupted while they ran)."""
        hooks = self.deps.hooks
        if hooks is None or not hooks.active("UserPromptSubmit"):
            return [], []
        try:
            verdict = await signal.race(hooks.run("UserPromptSubmit", {"prompt": text}))
        except Aborted:
            return [Terminal("aborted", 0)], None
        said: list[Notice | Terminal] = [Notice(line) for line in verdict.messages]
        if verdict.block or verdict.stop:  # the user reads why
            why = verdict.reason or verdict.stop_reason or "no reason given"
            said.append(Notice(f"Your message was blocked by a UserPromptSubmit hook: {why}"))
            said.append(Terminal("aborted", 0, f"blocked by a UserPromptSubmit hook: {why}"))
            return said, None
        new_id = self.deps.new_id
        return said, [hook_context.context_message("UserPromptSubmit", text, id=new_id()) for text in verdict.context]

    def _explained(self, terminal: Terminal) -> Terminal:
        """A refusal as too long that nothing here could answer, saying what fills the request (and not to set
        `CONTEXT_WINDOW_TOKENS` when it is set) instead of the general hint."""
        if terminal.context_limit is None:
            return terminal
        hint = self.compaction.refusal_hint(self.messages, self.system_prompt, self.tools.specs())
        return msgspec.structs.replace(terminal, error=with_hint(terminal.error, hint))

    def _count_summary_call(self, usage: Usage) -> None:
        """A summary (autocompact, `/compact`, a refusal's recovery) is a model call too: it costs the same. It
        says nothing about the context in use, so `last_usage` and the meter stay as they are."""
        self.totals.usage += usage
        self.totals.model_calls += 1
        if self.on_call is not None:
            self.on_call(usage, None)

    def _params(self, signal: AbortSignal) -> QueryParams:
        return QueryParams(
            messages=self.messages,
            tools=self.tools,
            context=self.context,
            system=self.system_prompt,
            max_turns=self.max_turns,
            compact=self.compact,
            signal=signal,
            max_tokens=self.max_tokens,
        )

    async def _fit_window(self, limit: int, signal: AbortSignal) -> Compacted | Notice | None:
        """After a context-length refusal: summarise the older history (as `/compact` does), and when the refusal
        stated the window, also lower the outbound pipeline's threshold to fit it (within one long turn there is
        nothing older to summarise, but old tool results can still be cleared). What was done, or None when
        nothing could help (or the user interrupted)."""
        tightened = False
        if limit:
            self.compaction.learn_window(limit)
            fitting = limit * FITTING_CHARS_PER_TOKEN
            if fitting < self.compact.threshold_chars:
                self.compact = msgspec.structs.replace(self.compact, threshold_chars=fitting)
                tightened = True
        try:
            summary = self.compaction.now(self.messages, self.system_prompt, self.tools.specs(), trigger="auto")
            result = await signal.race(summary)
        except Aborted:
            return None
        if isinstance(result, Compacted):
            self._rewrite(result.messages)
            return Compacted(result.messages, f"The model refused the request as too long. {result.notice}")
        if tightened:
            return Notice(
                f"The model refused the request as too long (its window is {limit:,} tokens); old tool results "
                "are now cleared sooner. Trying again."
            )
        return None

    async def compact_now(self, focus: str = "") -> Compacted | str:
        """`/compact [focus]`: summarise the older history now; the new history, or why there was none."""
        if self._signal is not None:
            return "A turn is running; compact when it has finished."
        result = await self.compaction.now(self.messages, self.system_prompt, self.tools.specs(), focus)
        if isinstance(result, Compacted):
            self._rewrite(result.messages)
        return result

    def context_reading(self) -> ContextReading:
        """How full the context window is (for the status line and `/status`)."""
        return self.compaction.reading(self.messages, self.system_prompt, self.tools.specs())

    def _rewrite(self, messages: Sequence[Message]) -> None:
        self.messages = list(messages)
        self.context.file_reads.clear()  # what was read before is now only in the summary, if at all
        if self.on_rewrite is not None:
            self.on_rewrite(self.messages)

    def _append(self, message: Message) -> None:
        self.messages.append(message)
        if self.on_message is not None:
            self.on_message(message)

    def use_model(self, model: str) -> None:
        """The provider now calls `model`: the context window and compaction follow it."""
        self.compaction.use_model(model)
        self.compact = msgspec.structs.replace(self.compact, window_tokens=self.compaction.window)

    def add_message(self, message: Message) -> None:
        """Add a message made between turns (a `!command` the user ran, and its output): it joins the history, and
        the transcript, as a turn's messages do; the model sees it with the next turn."""
        self._append(message)

    def restore(self, messages: Sequence[Message]) -> None:
        """Continue a saved conversation: its messages become the history (they are already on disk)."""
        self.messages = list(messages)

    def abort_current_turn(self, reason: str = "interrupted") -> bool:
        """Abort the running turn (model stream and tools); False when no turn is running."""
        if self._signal is None:
            return False
        self._signal.abort(reason)
        return True

    def clear(self) -> None:
        """Forget the conversation; the system prompt and tools stay (the breaker too: it is per session)."""
        self.messages = []
        self.compaction.reset()
        self.context.file_reads.clear()
