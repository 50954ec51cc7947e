"""The session's side of compaction: the context meter, and when and how an LLM summary rewrites the history.

The outbound stages ①–③ are pure and run inside the loop on every call. This object holds what must live as long
as the session — the meter's last provider report, autocompact's circuit breaker and thrash guard — and answers
the loop's question before every model call ("should a summary rewrite the history now?") and the user's
`/compact [focus]`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Literal

import msgspec

from ..events import Compacted
from ..messages import Message, Usage
from ..providers.base import CallModel
from ..tools.spec import ToolSpec
from ..trace import trace
from .autocompact import (
    AutoCompactConfig,
    AutoCompactResult,
    AutoCompactState,
    check_autocompact,
    compact_now,
    maybe_autocompact,
    model_summarizer,
)
from .filling import HOOK_CONTEXT, SYSTEM_PROMPT, YOUR_MESSAGES, largest
from .meter import ContextMeter, ContextReading, base_tokens
from .pipeline import CompactOptions, apply_tool_result_budget
from .tokens import configured_window, context_window, estimate_messages_tokens

ReinjectSource = Callable[[], Sequence[Message]]
Trigger = Literal["manual", "auto"]
PreCompact = Callable[[Trigger, str], Awaitable[list[str]]]
"""Runs the PreCompact hooks before a summary (its trigger and the user's focus); the lines they have for the user."""


class Compaction:
    """Meter + autocompact for one session."""

    def __init__(
        self,
        call_model: CallModel,
        *,
        model: str = "",
        options: CompactOptions | None = None,
        auto: AutoCompactConfig | None = None,
        env: Mapping[str, str] | None = None,
        reinject: ReinjectSource | None = None,
    ) -> None:
        self.auto = auto or AutoCompactConfig.from_env(env, model=model)
        self.window = self.auto.window_tokens if auto else context_window(model, env)
        self.window_configured = configured_window(env) is not None
        """Whether `CONTEXT_WINDOW_TOKENS` set the window (a refusal's message then does not suggest it)."""
        self.options = options or CompactOptions.from_env(env, window_tokens=self.window)
        """The outbound pipeline's options (the loop runs ①–③ with them; v2 sizes itself to the window)."""
        self.state = AutoCompactState()
        self.meter = ContextMeter()
        self.reinject = reinject
        """Project context and loaded skills, re-injected after a summary."""
        self.on_usage: Callable[[Usage], None] | None = None
        """Told the usage of every summary call (the session adds it to its totals)."""
        self.pre_compact: PreCompact | None = None
        """Awaited right before a summary is made (the session's PreCompact hooks)."""
        self._summarize = model_summarizer(call_model, on_usage=self._summary_usage)
        self._base_key: tuple[str, int] = ("", -1)
        self._base = 0
        self._schemas = ""

    def _summary_usage(self, usage: Usage) -> None:
        if self.on_usage is not None:
            self.on_usage(usage)

    def base(self, system: str, tools: Sequence[ToolSpec]) -> int:
        """Estimated tokens of the system prompt and tool schemas (recomputed only when they change)."""
        key = (system, len(tools))
        if key != self._base_key:
            schemas = json.dumps([msgspec.to_builtins(t) for t in tools], ensure_ascii=False)
            self._base, self._base_key, self._schemas = base_tokens(system, schemas), key, schemas
        return self._base

    def observe(self, usage: Usage, history: Sequence[Message]) -> None:
        """Record a model call's reported usage (its answer is the last message of `history`)."""
        self.meter.observe(usage, history)

    def reading(self, history: Sequence[Message], system: str, tools: Sequence[ToolSpec]) -> ContextReading:
        """How full the context is: the last report plus an estimate of what was added since."""
        return self.meter.read(self._sent(history), self.window, base_tokens=self.base(system, tools))

    def sent(self, history: Sequence[Message]) -> Sequence[Message]:
        """The history as the next request sends it, as the meter counts it (`/context`)."""
        return self._sent(history)

    def _sent(self, history: Sequence[Message]) -> Sequence[Message]:
        """What the meter estimates: the history as stage ① sends it. Estimating the stored history instead
        counted every long tool result whole, so right after a resume (no provider report yet) a few large
        outputs read as a full window and triggered a summary for nothing. (Quiet: the stage's trace line is the
        loop's, which then gets this very result without the stage running again.)"""
        return apply_tool_result_budget(history, self.options, quiet=True)

    def _measure(self, base: int) -> Callable[[Sequence[Message]], int]:
        """How the meter estimates a history it has no report for (a rewritten one): the one estimate for what a
        summary's notice says and what `/status` says right after it."""

        def measure(messages: Sequence[Message]) -> int:
            return base + estimate_messages_tokens(self._sent(messages))

        return measure

    def refusal_hint(self, history: Sequence[Message], system: str, tools: Sequence[ToolSpec]) -> str:
        """What to say when the model refused a request as too long and nothing here could make it fit: what
        fills the request, and what would help."""
        self.base(system, tools)
        sent = self._sent(history)
        label, said = largest(sent, system, self._schemas)
        if label.startswith(HOOK_CONTEXT):
            advice = "check what that hook prints; /clear starts afresh"
        elif label == YOUR_MESSAGES:
            advice = "your messages are always sent word for word: split the task, or /clear to start afresh"
        elif label == SYSTEM_PROMPT:
            advice = "`ram --print-system-prompt` shows it (project instructions, memory, skills)"
        else:
            advice = "in the REPL /compact shrinks it and /clear starts afresh"
        if not self.window_configured:
            advice += "; CONTEXT_WINDOW_TOKENS set to the model's real window makes compaction start in time"
        return f"the conversation is longer than the model's window, and {said}: {advice}"

    def learn_window(self, tokens: int) -> None:
        """The provider stated a smaller window than we assumed (in a context-length refusal): use it from now
        on, for the meter and for when an automatic summary starts."""
        if 0 < tokens < self.window:
            self.window = tokens
            self.auto = msgspec.structs.replace(self.auto, window_tokens=tokens)

    def use_model(self, model: str, env: Mapping[str, str] | None = None) -> None:
        """The session switched to `model` (`/model`): the window, when a summary starts and how the outbound
        stages size themselves follow its window (unless `CONTEXT_WINDOW_TOKENS` set the window)."""
        if self.window_configured:
            return
        window = context_window(model, env)
        self.window = window
        self.auto = msgspec.structs.replace(self.auto, window_tokens=window)
        self.options = msgspec.structs.replace(self.options, window_tokens=window)

    def reset(self) -> None:
        """The history was cleared or replaced: the last report no longer describes it."""
        self.meter.reset()

    async def maybe(self, history: Sequence[Message], system: str, tools: Sequence[ToolSpec]) -> Compacted | None:
        """An automatic summary, when the context passed the trigger; None otherwise (or when it failed)."""
        base = self.base(system, tools)
        used = self.meter.read(self._sent(history), self.window, base_tokens=base).tokens
        said: list[str] = []
        if self.pre_compact is not None and check_autocompact(used, self.auto, self.state) is None:
            said = await self.pre_compact("auto", "")
        result = await maybe_autocompact(
            history,
            used,
            config=self.auto,
            state=self.state,
            summarize=self._summarize,
            context=self.reinject,
            base_tokens=base,
            measure=self._measure(base),
        )
        return self._outcome(result, said)

    async def now(
        self,
        history: Sequence[Message],
        system: str,
        tools: Sequence[ToolSpec],
        focus: str = "",
        trigger: Trigger = "manual",
    ) -> Compacted | str:
        """`/compact [focus]` (or, `trigger` auto, a refusal's recovery): a summary now, or one line saying why
        there was none."""
        said = await self.pre_compact(trigger, focus) if self.pre_compact is not None else []
        base = self.base(system, tools)
        result = await compact_now(
            history,
            config=self.auto,
            state=self.state,
            summarize=self._summarize,
            focus=focus,
            context=self.reinject,
            used_tokens=self.meter.read(self._sent(history), self.window, base_tokens=base).tokens,
            base_tokens=base,
            measure=self._measure(base),
            within_turn=trigger == "auto",
        )
        compacted = self._outcome(result, said)
        if compacted is not None:
            return compacted
        if result.outcome == "nothing_to_compact":
            return " ".join([*said, "Nothing to compact yet: the conversation is all recent."])
        return " ".join([*said, f"Compaction failed: {result.error or result.outcome}. The conversation is unchanged."])

    def _outcome(self, result: AutoCompactResult, said: Sequence[str] = ()) -> Compacted | None:
        if not result.compacted or result.messages is None:
            if result.outcome == "failed":
                trace("compact.fallback", reason="summary_failed", failures=self.state.consecutive_failures)
            return None
        self.meter.reset()
        # Rounded as the status line and `/status` round them: right after, `/status` says the same.
        before = ContextReading(result.tokens_before, self.window, 0).percent
        after = ContextReading(result.tokens_after, self.window, 0).percent
        notice = (
            f"Compacted the conversation: ~{before}% → ~{after}% of the context window "
            f"({result.kept_user_messages} of your messages kept word for word)."
        )
        return Compacted(tuple(result.messages), " ".join([*said, notice]))
