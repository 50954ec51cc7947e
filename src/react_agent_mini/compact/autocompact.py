"""Autocompact: when the context passes a share of the window, one side call summarises the older history and
the session history is rewritten — the only compaction that changes the history itself.

The rewritten history, in order:
1. a boundary marker (meta user message) — where the compacted history starts;
2. the re-injected context (project context, loaded skills: the caller's `context()`), which the summary must
   not have to carry;
3. the summary (meta user message);
4. every message the user typed in the summarised part, verbatim and in order — instructions lost to a summary
   are what users complain about most;
5. the recent tail, unchanged, starting at a message the user typed — or, for an automatic summary when the
   current turn alone is longer than the tail may be (one long headless task), at one of its model calls — so
   no tool_result loses its tool_use.

The summariser is injected (`Summarizer`: system prompt and messages in, summary text out; `model_summarizer`
builds one over the loop's `call_model`), so this module never talks to a provider and tests script it.
State that must outlive a call — the failure count of the circuit breaker and the thrash guard — lives in an
`AutoCompactState` the session owns (upstream rebuilt it per call, so its breaker never tripped).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from itertools import accumulate
from typing import Any, Literal, TypeAlias

import msgspec

from ..events import ModelResponse
from ..messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage, user_text
from ..providers.base import CallModel, ModelRequest
from ..trace import trace
from .hook_context import hook_source
from .tokens import context_window, estimate_message_tokens, estimate_tokens

Summarizer: TypeAlias = Callable[[str, list[Message]], Awaitable[str]]
"""(system prompt, messages) → summary text; raises or returns "" on failure."""
ContextSource: TypeAlias = Callable[[], Sequence[Message]]
"""The context to re-inject after a summary (project context, loaded skills), as user messages."""
Measure: TypeAlias = Callable[[Sequence[Message]], int]
"""Estimated tokens of a request carrying a history (the system prompt and tools included)."""
Outcome: TypeAlias = Literal[
    "success",
    "compact_disabled",
    "autocompact_disabled",
    "circuit_open",
    "below_threshold",
    "thrash",
    "nothing_to_compact",
    "failed",
]

COMPACT_BOUNDARY = "[compact boundary]"
"""How the first message of a compacted history starts."""
SUMMARY_HEADER = "Conversation summary (compacted):"
"""How the summary message starts."""
SUMMARIZER_SYSTEM = (
    "You summarize coding-agent conversations for context compaction. Reply with the summary only, "
    "in the language the user writes in."
)
SUMMARY_INSTRUCTIONS = (
    "Summarize the conversation below so a coding agent can continue the work without it. The user's own "
    "messages will be kept verbatim after your summary, so do not repeat them. Record instead what was done and "
    "learned: the task and where it stands, decisions and their reasons, files read, created or changed (paths, "
    "and what changed), commands run and their outcomes, errors and how they were resolved, and the open "
    "questions and next steps. Be specific and concise."
)
EMPTY_SUMMARY_ERROR = "compact summary is empty"

DEFAULT_AUTOCOMPACT_PERCENT = 80
MAX_CONSECUTIVE_FAILURES = 3


class AutoCompactConfig(msgspec.Struct, frozen=True):
    """When to summarise and how much to keep; build with `from_env`."""

    compact_enabled: bool = True
    """False when `COMPACT=0`: no automatic summary (a `/compact` still works)."""
    auto_enabled: bool = True
    """False when `AUTOCOMPACT=0`: no automatic summary (a `/compact` still works)."""
    percent: int = DEFAULT_AUTOCOMPACT_PERCENT
    """Summarise when the context is strictly above this share of the window (`AUTOCOMPACT_PERCENT`)."""
    window_tokens: int = 128_000
    """The model's context window (`context_window(model)`, or `CONTEXT_WINDOW_TOKENS`)."""
    tail_percent: int = 15
    """The recent tail kept verbatim may use up to this share of the window (at least the current turn stays)."""
    request_percent: int = 50
    """The rendered history sent to the summariser is cut to this share of the window."""
    rearm_percent: int = 10
    """Thrash guard: after a summary, the next automatic one waits until the context grew by this share."""
    max_failures: int = MAX_CONSECUTIVE_FAILURES
    """Consecutive failures after which automatic summaries stop for the session (the circuit breaker)."""
    result_chars: int = 500
    """Characters of each tool result shown to the summariser."""

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, *, model: str = "", **overrides: Any) -> AutoCompactConfig:
        """From `env` (default: the process environment) and the model's window; `overrides` (not None) win."""
        env = os.environ if env is None else env
        fields: dict[str, Any] = {"window_tokens": context_window(model, env)}
        if env.get("COMPACT") == "0":
            fields["compact_enabled"] = False
        if env.get("AUTOCOMPACT") == "0":
            fields["auto_enabled"] = False
        percent = env.get("AUTOCOMPACT_PERCENT", "")
        if percent.isascii() and percent.isdigit():
            fields["percent"] = min(int(percent), 100)
        fields.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**fields)

    @property
    def trigger_tokens(self) -> int:
        """Context size (tokens) above which an automatic summary runs."""
        return self.window_tokens * self.percent // 100


class AutoCompactState:
    """What autocompact remembers across calls; one per session, kept across `/clear`."""

    def __init__(self) -> None:
        self.consecutive_failures = 0
        """Failed (or ineffective) automatic summaries in a row; at `max_failures` the breaker is open."""
        self.compactions = 0
        """Successful summaries in this session."""
        self.last_error = ""
        """Why the last attempt failed ("" after a success)."""
        self.rearm_tokens = 0
        """Thrash guard: no automatic summary until the context passes this many tokens (0 = no guard)."""

    def breaker_open(self, config: AutoCompactConfig) -> bool:
        """True once automatic summaries failed `max_failures` times in a row."""
        return self.consecutive_failures >= config.max_failures


class AutoCompactResult(msgspec.Struct, frozen=True):
    """What one attempt did. On success `messages` is the new history; otherwise it is None and the history
    stays as it was (the outbound pipeline's stage ③ remains the fallback)."""

    outcome: Outcome
    """`success`, or why nothing was rewritten."""
    trigger: Literal["auto", "manual"] = "auto"
    """An automatic summary, or `/compact`."""
    messages: tuple[Message, ...] | None = None
    """The rewritten history (success only)."""
    summary: str = ""
    """The summariser's text (success only)."""
    error: str = ""
    """Why it failed (`failed` only)."""
    tokens_before: int = 0
    """Context tokens when it ran."""
    tokens_after: int = 0
    """Estimated context tokens of the rewritten history."""
    summarized_messages: int = 0
    """Messages replaced by the summary."""
    kept_user_messages: int = 0
    """User messages from the summarised part kept verbatim."""
    tail_messages: int = 0
    """Recent messages kept unchanged."""
    focus: str = ""
    """What `/compact <focus>` asked the summary to focus on."""

    @property
    def compacted(self) -> bool:
        """True when the history was rewritten."""
        return self.messages is not None

    def boundary_record(self) -> dict[str, Any]:
        """A transcript record marking the rewrite."""
        record: dict[str, Any] = {
            "type": "compact_boundary",
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summarized_messages": self.summarized_messages,
            "kept_user_messages": self.kept_user_messages,
            "tail_messages": self.tail_messages,
        }
        if self.focus:
            record["focus"] = self.focus
        return record


# ---- deciding ----


def check_autocompact(used_tokens: int, config: AutoCompactConfig, state: AutoCompactState) -> Outcome | None:
    """Why an automatic summary must not run now, or None when it should. Cheap: call it before every model
    call with the context meter's reading."""
    if not config.compact_enabled:
        return "compact_disabled"
    if not config.auto_enabled:
        return "autocompact_disabled"
    if state.breaker_open(config):
        return "circuit_open"
    if used_tokens <= config.trigger_tokens:
        return "below_threshold"
    if used_tokens < state.rearm_tokens:
        return "thrash"  # just summarised and barely grown since: another summary would not get further
    return None


# ---- planning the rewrite ----


class CompactionPlan(msgspec.Struct, frozen=True):
    """How a history splits for a summary."""

    older: tuple[Message, ...]
    """Summarised (what the summariser reads)."""
    user_messages: tuple[Message, ...]
    """The user's messages within `older`, kept verbatim."""
    tail: tuple[Message, ...]
    """Kept unchanged; starts with a message the user typed."""


def is_user_typed(message: Message) -> bool:
    """A message the user typed: user role, text only, not injected by the agent."""
    return message.is_user_text and not message.meta


def plan_compaction(
    history: Sequence[Message], config: AutoCompactConfig, *, within_turn: bool = False
) -> CompactionPlan | None:
    """Split `history` into the part to summarise and the tail to keep; None when there is nothing older to
    summarise. The tail starts at the earliest message the user typed whose suffix fits `tail_percent` of the
    window — at the latest at the start of the current turn, which then stays whole; with `within_turn` (an
    automatic summary), a current turn longer than that is cut too, at the earliest of its model calls whose
    suffix fits (at the latest its last one). Without that, a long headless task, which is one turn, could never
    be summarised: its requests grew past the window with the summary's trigger long passed."""
    starts = [i for i, m in enumerate(history) if is_user_typed(m)]
    if not starts:
        return None
    sizes = [estimate_message_tokens(m) for m in history]
    suffix = [*reversed(list(accumulate(reversed(sizes)))), 0]  # suffix[i] = tokens of history[i:]
    budget = config.window_tokens * config.tail_percent // 100
    cut = next((i for i in starts if suffix[i] <= budget), starts[-1])
    if within_turn and suffix[cut] > budget:
        # Its assistant messages: the message before each is a user message, whose tool_results (if any)
        # answer calls that lie before it too, so a tail starting there separates no call from its result.
        steps = [i for i in range(cut + 1, len(history)) if history[i].role == "assistant"]
        if steps:
            cut = next((i for i in steps if suffix[i] <= budget), steps[-1])
    older = tuple(history[:cut])
    if not any(m.role == "assistant" for m in older):
        return None  # only user messages before the tail: they are kept anyway, nothing to summarise
    users = tuple(m for m in older if is_user_typed(m))
    return CompactionPlan(older, users, tuple(history[cut:]))


# ---- the summary request ----


def render_history(messages: Sequence[Message], *, result_chars: int = 500, input_chars: int = 300) -> list[str]:
    """The history as compact lines for the summariser: every text once, tool calls with their input cut to
    `input_chars`, tool results cut to `result_chars`, reasoning left out."""
    names = {u.id: u.name for m in messages for u in m.tool_uses}
    lines: list[str] = []
    for message in messages:
        speaker = "Assistant" if message.role == "assistant" else "Context" if message.meta else "User"
        clipped = message.meta and hook_source(message) is not None  # a hook's output, shown as a tool's is
        for block in message.content:
            if isinstance(block, TextBlock):
                if block.text.strip():
                    lines.append(f"{speaker}: {_clip(block.text, result_chars) if clipped else block.text}")
            elif isinstance(block, ToolUseBlock):
                args = json.dumps(dict(block.input), ensure_ascii=False, default=str)
                lines.append(f"Assistant called {block.name} {_clip(args, input_chars)}")
            elif isinstance(block, ToolResultBlock):
                label = f"Result of {names.get(block.tool_use_id, 'a tool')}" + (" (error)" if block.is_error else "")
                lines.append(f"{label}: {_clip(block.content, result_chars)}")
    return lines


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text) - limit} more characters]"


def _fit_lines(lines: list[str], budget_tokens: int) -> list[str]:
    """`lines`, or its start and end with the middle left out, within `budget_tokens`."""
    costs = [estimate_tokens(line) + 1 for line in lines]
    if sum(costs) <= budget_tokens:
        return lines
    # Keep the start (the task as first stated, an earlier summary) and, mostly, the latest work.
    head: list[str] = []
    used = 0
    for line, cost in zip(lines, costs, strict=True):
        if used + cost > budget_tokens // 4:
            break
        head.append(line)
        used += cost
    tail: list[str] = []
    for line, cost in zip(reversed(lines[len(head) :]), reversed(costs[len(head) :]), strict=True):
        if used + cost > budget_tokens:
            break
        tail.append(line)
        used += cost
    omitted = len(lines) - len(head) - len(tail)
    return [*head, f"[… {omitted} lines of the conversation left out here …]", *reversed(tail)]


def summary_request(
    plan: CompactionPlan, config: AutoCompactConfig, *, focus: str = "", skip: Sequence[Message] = ()
) -> list[Message]:
    """The one user message asking for the summary (`skip`: messages not to show, e.g. the re-injected context)."""
    skipped = {m.text for m in skip if m.text}
    shown = [m for m in plan.older if not (m.meta and m.text and m.text in skipped)]
    lines = render_history(shown, result_chars=config.result_chars)
    budget = config.window_tokens * config.request_percent // 100
    if sum(estimate_tokens(line) for line in lines) > budget:
        lines = render_history(shown, result_chars=config.result_chars // 3, input_chars=120)
    lines = _fit_lines(lines, budget)
    parts = [SUMMARY_INSTRUCTIONS]
    if focus.strip():
        parts.append(f"Focus the summary on: {focus.strip()}")
    parts.append("<conversation>\n" + "\n".join(lines) + "\n</conversation>")
    return [user_text("\n\n".join(parts))]


# ---- rewriting ----


def rewritten_history(plan: CompactionPlan, summary: str, context: Sequence[Message] = ()) -> tuple[Message, ...]:
    """Boundary, re-injected context, summary, the user's messages verbatim, then the tail."""
    tail_texts = {m.text for m in plan.tail if m.text}
    injected = tuple(m for m in context if m.role == "user" and m.text not in tail_texts)  # no duplicates
    boundary = user_text(
        f"{COMPACT_BOUNDARY} The earlier conversation was compacted to save context: a summary follows, then the "
        "user's messages from that part verbatim, then the latest exchanges unchanged.",
        meta=True,
    )
    note = (
        "\n\nThe user's messages from the summarised part follow, verbatim and in order." if plan.user_messages else ""
    )
    summary_message = user_text(f"{SUMMARY_HEADER}\n{summary.strip()}{note}", meta=True)
    return (boundary, *injected, summary_message, *plan.user_messages, *plan.tail)


async def maybe_autocompact(
    history: Sequence[Message],
    used_tokens: int,
    *,
    config: AutoCompactConfig,
    state: AutoCompactState,
    summarize: Summarizer,
    context: ContextSource | None = None,
    base_tokens: int = 0,
    measure: Measure | None = None,
) -> AutoCompactResult:
    """Summarise when `used_tokens` (the context meter's reading) calls for it; see `check_autocompact`.

    `base_tokens`: the system prompt and tool schemas, so the estimate after the rewrite compares with
    `used_tokens`; `measure`, when given, estimates the rewritten history instead (the context meter's way, so
    what the notice says and what `/status` says next agree). Failures are counted in `state` and never
    raised: the history then stays as it is.
    """
    skip = check_autocompact(used_tokens, config, state)
    if skip is not None:
        return AutoCompactResult(skip, tokens_before=used_tokens)
    measured = measure or _measure(base_tokens)
    return await _compact(history, used_tokens, "auto", "", config, state, summarize, context, measured, True)


async def compact_now(
    history: Sequence[Message],
    *,
    config: AutoCompactConfig,
    state: AutoCompactState,
    summarize: Summarizer,
    focus: str = "",
    context: ContextSource | None = None,
    used_tokens: int | None = None,
    base_tokens: int = 0,
    measure: Measure | None = None,
    within_turn: bool = False,
) -> AutoCompactResult:
    """`/compact [focus]`: summarise now, whatever the switches, the threshold or the breaker say (the user asked).

    Everything before the last turn is summarised, however small (as Claude Code's `/compact` does; an automatic
    summary keeps a tail of `tail_percent` of the window instead) — with `within_turn` (after the model refused
    a request as too long), everything before the current turn's last model call. A failure is reported, not
    counted toward the breaker; a success closes it again. `measure`: as for `maybe_autocompact`.
    """
    measured = measure or _measure(base_tokens)
    if used_tokens is None:
        used_tokens = measured(history)
    config = msgspec.structs.replace(config, tail_percent=0)
    return await _compact(
        history, used_tokens, "manual", focus, config, state, summarize, context, measured, within_turn
    )


def _measure(base_tokens: int) -> Measure:
    def measure(messages: Sequence[Message]) -> int:
        return base_tokens + sum(estimate_message_tokens(m) for m in messages)

    return measure


async def _compact(
    history: Sequence[Message],
    used_tokens: int,
    trigger: Literal["auto", "manual"],
    focus: str,
    config: AutoCompactConfig,
    state: AutoCompactState,
    summarize: Summarizer,
    context: ContextSource | None,
    measure: Measure,
    within_turn: bool,
) -> AutoCompactResult:
    plan = plan_compaction(history, config, within_turn=within_turn)
    if plan is None:
        return AutoCompactResult("nothing_to_compact", trigger, tokens_before=used_tokens, focus=focus)
    injected = tuple(context()) if context is not None else ()
    request = summary_request(plan, config, focus=focus, skip=injected)
    try:
        summary = (await summarize(SUMMARIZER_SYSTEM, request)).strip()
        if not summary:
            raise ValueError(EMPTY_SUMMARY_ERROR)
    except Exception as exc:  # any summariser failure falls back to the pipeline; the breaker counts it
        error = str(exc) or type(exc).__name__
        if trigger == "auto":
            state.consecutive_failures += 1
        state.last_error = error
        trace("compact.auto_fail", trigger=trigger, error=error[:80], failures=state.consecutive_failures)
        return AutoCompactResult("failed", trigger, error=error, tokens_before=used_tokens, focus=focus)

    messages = rewritten_history(plan, summary, injected)
    after = measure(messages)
    state.compactions += 1
    state.last_error = ""
    state.rearm_tokens = after + config.window_tokens * config.rearm_percent // 100
    if after > config.trigger_tokens and trigger == "auto":
        # Rewritten but still over the threshold (e.g. the user's own messages fill the window): retrying soon
        # cannot do better, so it counts toward the breaker.
        state.consecutive_failures += 1
        state.last_error = "still over the threshold after compacting"
    else:
        state.consecutive_failures = 0
    result = AutoCompactResult(
        "success",
        trigger,
        messages,
        summary,
        tokens_before=used_tokens,
        tokens_after=after,
        summarized_messages=len(plan.older),
        kept_user_messages=len(plan.user_messages),
        tail_messages=len(plan.tail),
        focus=focus,
    )
    trace(
        "compact.auto",
        trigger=trigger,
        before=used_tokens,
        after=after,
        percent=round(100 * used_tokens / config.window_tokens) if config.window_tokens else 0,
        summarized=len(plan.older),
        keptUserMessages=len(plan.user_messages),
        tail=len(plan.tail),
    )
    return result


# ---- a summariser over the loop's call_model ----


def model_summarizer(
    call_model: CallModel, *, max_tokens: int | None = None, on_usage: Callable[[Usage], None] | None = None
) -> Summarizer:
    """A `Summarizer` that makes one side call without tools and returns the final answer's text.

    Only the final `ModelResponse` counts: the streamed deltas repeat the same text (upstream concatenated
    both and got every summary twice). `on_usage` is told what the call cost (the session counts it).
    """

    async def summarize(system: str, messages: list[Message]) -> str:
        response: ModelResponse | None = None
        async for event in call_model(ModelRequest(system, tuple(messages), (), max_tokens)):
            if isinstance(event, ModelResponse):
                response = event
        if response is None:
            raise RuntimeError("the summary call ended without a response")
        if on_usage is not None:
            on_usage(response.usage)
        return response.message.text

    return summarize
