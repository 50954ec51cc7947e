"""Profile v2's stages ② and ③: make room rarely, deeply, oldest first, and never lose what the user wrote.

Why: a provider bills a repeated request prefix at a tenth of the price, so a stage that changes the request on
every call (the v4 pipeline's ③ keeps "the last 40 messages", its ② clears one more result per call) makes every call
a cache write. Here, as in lowwater.py, each decision is *replayed* over the points where the model was called
(after a user message an assistant message follows, and at the end), so the stages stay pure functions of the
history: at a point where the request being sent passes `threshold_tokens`, room is made down to the low-water
mark (`low_water_percent` of the threshold) and then nothing moves until the threshold is passed again. Between
two such points consecutive requests share their whole prefix.

How room is made, least painful first, never touching the newest `micro_keep_recent` results (a hook's context
message counts as one result: hook_context.py):
1. demote: older results fall from their fresh size (shape.py) to the v4 pipeline's `max_tool_result_chars` cut;
2. clear: older regenerable results become the v4 pipeline's placeholder
   `[Old tool result content cleared] tool=<Name> <path>` (old hook context: `[Old hook context cleared …]`);
3. drop: old turns go — the assistant's messages, the tool traffic and the hooks' context — but every other
   user text message in them (what the user typed, and injected context such as a summary) stays, word for word
   and in order, after one note saying what was dropped. The cut is at a user text message, so no tool_use loses
   its tool_result.
Each step runs oldest first, so what the next one changes lies after everything already settled: the
Anthropic adapter puts a cache breakpoint on the newest placeholder, and making room costs one cache write of
what follows it.

Sizes are estimated tokens (tokens.py: right for code, English and Chinese). The replay is continued from call
to call (the history only grows), so a call costs work for the messages added since, not for the session.

Measured with benchmarks/context_economy_reactive.py (150 turns, a model that reads on until it has what it
needs, 128k window): against the v4 pipeline, 0.45× the model calls and 0.47× the cost, prefix-cache share
87% (the v4 pipeline's 46%; 88% is the most any strategy that only appends could get with these whole results), peak
41% of the window, every user message in every request, every needed span seen whole (v4: 221 of 248).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from itertools import chain
from operator import is_not

from ..memo import PrefixMemo, count_work, shared_prefix
from ..messages import Message, ToolResultBlock, ToolUseBlock, user_text
from ..trace import enabled, trace
from . import hook_context
from .common import call_for, rewrite_results
from .micro import clearable, cleared
from .options import CompactOptions
from .shape import demoted
from .tokens import MESSAGE_OVERHEAD_TOKENS, estimate_message_tokens, result_tokens

DROPPED_NOTE_TEXT = (
    "[Earlier turns of this conversation were dropped to fit the context window: the assistant's messages and "
    "the tool calls and results in them are gone. Every message the user wrote in them follows, word for word "
    "and oldest first; the conversation then goes on as it was.]"
)
DROPPED_NOTE = user_text(DROPPED_NOTE_TEXT, meta=True, id="compact-dropped-turns")
"""The first message of a request whose oldest turns were dropped (one object: the prefix stays the same)."""

FRESH, DEMOTED, CLEARED = 0, 1, 2
STALE_CALLS = 8
"""A replay not continued for this many calls is let go (a history replaced by `/clear` or a summary)."""
MAX_PLANS = 8
"""Replays kept at once (sessions in one process, and the odd caller with a history of its own)."""


def _tokens(result: ToolResultBlock | Message) -> int:
    """Estimated tokens of a result as the replay counts it (a hook context message without its framing)."""
    if isinstance(result, Message):
        return estimate_message_tokens(result) - MESSAGE_OVERHEAD_TOKENS
    return result_tokens(result)


def outbound_tokens(messages: Sequence[Message]) -> int:
    """Estimated tokens of `messages` (a running total: only messages added since the last call cost work)."""
    totals = _running_tokens(messages, _running_total)
    return totals[-1] if totals else 0


def _running_total(messages: Sequence[Message], index: int, totals: Sequence[int]) -> int:
    return (totals[index - 1] if index else 0) + estimate_message_tokens(messages[index])


_running_tokens: PrefixMemo[Message, int] = PrefixMemo()


class Outbound(list[Message]):
    """v2's request: the messages, and where the provider may place cache breakpoints besides the tail."""

    cache_points: tuple[int, ...] = ()
    """Indices of messages that end a prefix no later call will change short of the next cut, and that the
    calls since the last cut marked too: a breakpoint after each lets the cut read that prefix from the cache
    and write only what follows (anthropic.py). Oldest first."""


class _Work:
    computed = 0
    """Messages the replays counted (for memo.computed_total)."""


_work = _Work()
count_work(_work)


class _Replay:
    """The replay of one history, continued call by call. Everything here only grows with the history, but for
    the decisions at the last point (its next message is not known yet), which are undone before continuing."""

    def __init__(self, options: CompactOptions, drop_only: bool) -> None:
        self.options = options
        self.drop_only = drop_only
        """③ alone (when ② was replaced by a no-op): only drops, no clears."""
        self.items: list[Message] = []
        """The history as it came in (identity: the next call's history starts with these)."""
        self.out: list[Message] = []
        """Each message as it is sent now."""
        self.sizes: list[int] = []
        """Tokens of each message as sent now."""
        self.user_text: list[bool] = []
        """Whether each message is a user text message that a drop keeps (what the user typed, a summary; not
        hook context, which goes with its turn)."""
        self.boundaries: list[int] = []
        """Indices of the user text messages, hook context included: where a cut may start."""
        self.first_result: list[int] = []
        """Index into the result lists of each message's first tool_result."""
        self.r_message: list[int] = []
        self.r_block: list[ToolResultBlock | Message] = []
        """Each result: a tool_result, or a hook context message (hook_context.py), which is shrunk as one."""
        self.r_call: list[ToolUseBlock | None] = []
        self.r_level: list[int] = []
        self.r_now: list[ToolResultBlock | Message] = []
        """Each result as sent now."""
        self.r_tokens: list[int] = []
        self.front: list[Message] = []
        """The user text messages of the dropped turns, in order."""
        self.cut = 0
        """First message of the kept tail."""
        self.kept = 0
        """Tokens of the request as sent now (the note and `front` included)."""
        self.demote_at = 0
        self.clear_at = 0
        """How far the demote and clear passes have gone through the results (oldest first)."""
        self.changed = 0
        """Messages of `out` that are not the history's own."""
        self.undo: list[tuple[int, int, ToolResultBlock | Message, int, Message, int]] | None = None
        self.saved: tuple[int, int, int, int, int, int] | None = None
        self.settled: tuple[int, int] = (0, -1)
        """`_settled()` before the decision at the last point (what the calls since the last cut had)."""
        self.used = 0

    # -- continuing --

    def extends(self, messages: Sequence[Message]) -> bool:
        return len(self.items) <= len(messages) and shared_prefix(self.items, messages) == len(self.items)

    def run(self, messages: Sequence[Message]) -> None:
        """Bring the replay to the end of `messages` (which start with `self.items`)."""
        self._rollback()
        for index in range(len(self.items), len(messages)):
            if index and self.items[index - 1].role == "user" and messages[index].role == "assistant":
                self._point(index - 1)  # a call point now known for sure
            self._count(messages[index])
            _work.computed += 1
        self.settled = self._settled()
        if self.items:
            self.undo, self.saved = [], self._scalars()
            self._point(len(self.items) - 1)  # the call being made now: undone before the next one continues

    def output(self, messages: Sequence[Message]) -> Sequence[Message]:
        if not self.cut and not self.changed:
            return messages
        out = Outbound(self.out) if not self.cut else Outbound([DROPPED_NOTE, *self.front, *self.out[self.cut :]])
        out.cache_points = self._cache_points()
        return out

    def _settled(self) -> tuple[int, int]:
        """Before this call's decision: (messages of the request's leading note and kept user texts, 0 when no
        turn was dropped; index of the last history message no clear or demotion can change, -1 when none)."""
        front = 1 + len(self.front) if self.cut else 0
        first = self.r_message[self.clear_at] if self.clear_at < len(self.r_message) else len(self.items)
        return front, first - 1 if first - 1 >= self.cut else -1

    def _cache_points(self) -> tuple[int, ...]:
        """`settled`, as positions in this request (whatever this call's decision changed comes after them)."""
        front, last = self.settled
        start = 1 + len(self.front) if self.cut else 0
        points = [front - 1] if front else []
        if last >= self.cut:
            points.append(start + last - self.cut)
        return tuple(p for i, p in enumerate(points) if p >= 0 and (not i or p > points[i - 1]))

    def _scalars(self) -> tuple[int, int, int, int, int, int]:
        return (self.cut, self.kept, self.demote_at, self.clear_at, len(self.front), self.changed)

    def _rollback(self) -> None:
        if self.undo is None or self.saved is None:
            return
        for result, level, block, tokens, message, size in reversed(self.undo):
            index = self.r_message[result]
            self.r_level[result], self.r_now[result], self.r_tokens[result] = level, block, tokens
            self.out[index], self.sizes[index] = message, size
        self.cut, self.kept, self.demote_at, self.clear_at, front, self.changed = self.saved
        del self.front[front:]
        self.undo = self.saved = None

    def _count(self, message: Message) -> None:
        index = len(self.items)
        self.items.append(message)
        self.out.append(message)
        size = estimate_message_tokens(message)
        self.sizes.append(size)
        self.kept += size
        is_text = message.is_user_text and message is not DROPPED_NOTE  # a request run again: its note goes
        hook = is_text and hook_context.hook_source(message) is not None
        self.user_text.append(is_text and not hook)
        if is_text:
            self.boundaries.append(index)
        self.first_result.append(len(self.r_block))
        if hook:  # shrunk as a tool result is, as one block
            self._add_result(index, message, None, size - MESSAGE_OVERHEAD_TOKENS)
            return
        if message.role != "user":
            return
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                self._add_result(index, block, call_for(self.items, index, block.tool_use_id), result_tokens(block))

    def _add_result(self, index: int, block: ToolResultBlock | Message, call: ToolUseBlock | None, tokens: int) -> None:
        self.r_message.append(index)
        self.r_block.append(block)
        self.r_call.append(call)
        self.r_level.append(FRESH)
        self.r_now.append(block)
        self.r_tokens.append(tokens)

    # -- one call point --

    def _point(self, point: int) -> None:
        options = self.options
        threshold = options.threshold_tokens
        if self.kept <= threshold:
            return
        low = threshold * options.low_water_percent // 100
        limit = self._protected(low // 2)
        if not self.drop_only:
            while self.demote_at < limit and self.kept > low:
                self._demote(self.demote_at)
                self.demote_at += 1
            while self.clear_at < limit and self.kept > low:
                self._clear(self.clear_at)
                self.clear_at += 1
        if self.kept > threshold:
            self._drop(point, low)

    def _protected(self, budget: int) -> int:
        """Results before this index may be demoted or cleared. The newest message's results stay whole (what
        the model just asked for, all of it) unless together they pass the threshold, and so do the newest
        `micro_keep_recent` as far as they fit in `budget` tokens together: protecting four results of a fifth
        of the threshold each would leave every call over it, and every call a cache write."""
        limit = len(self.r_block)
        newest = self.first_result[-1] if self.items else limit
        if sum(self.r_tokens[newest:]) > self.options.threshold_tokens:
            newest = limit - 1  # a batch bigger than the window allows: the newest result alone is sure to stay
        used = 0
        for count in range(self.options.micro_keep_recent):
            if limit == 0 or (limit <= newest and count and used + self.r_tokens[limit - 1] > budget):
                break
            used += self.r_tokens[limit - 1]
            limit -= 1
        return min(limit, newest)

    def _demote(self, result: int) -> None:
        if self.r_message[result] < self.cut or self.r_level[result] != FRESH:
            return
        block = self.r_block[result]
        limit = self.options.max_tool_result_chars
        if isinstance(block, Message):
            new: ToolResultBlock | Message | None = hook_context.demoted(block, limit)
        else:
            new = demoted(block, limit, self.r_call[result])
        if new is not None:
            self._set(result, DEMOTED, new)

    def _clear(self, result: int) -> None:
        if self.r_message[result] < self.cut or self.r_level[result] == CLEARED:
            return
        block = self.r_block[result]
        if isinstance(block, Message):
            placeholder = hook_context.cleared(block, self.options.micro_min_chars)
            if placeholder is not None:
                self._set(result, CLEARED, placeholder)
            return
        tool_use = clearable(block, self.r_call[result], self.options.micro_min_chars)
        if tool_use is not None:
            self._set(result, CLEARED, cleared(block, tool_use))

    def _set(self, result: int, level: int, block: ToolResultBlock | Message) -> None:
        tokens = _tokens(block)
        saved = self.r_tokens[result] - tokens
        if saved <= 0:
            return
        index = self.r_message[result]
        if self.undo is not None:
            self.undo.append(
                (
                    result,
                    self.r_level[result],
                    self.r_now[result],
                    self.r_tokens[result],
                    self.out[index],
                    self.sizes[index],
                )
            )
        self.r_level[result], self.r_now[result], self.r_tokens[result] = level, block, tokens
        self.sizes[index] -= saved
        self.kept -= saved
        before = self.out[index] is self.items[index]
        self.out[index] = self._rewritten(index)
        self.changed += before - (self.out[index] is self.items[index])

    def _rewritten(self, index: int) -> Message:
        """The history's message `index` with each of its results as sent now (a hook context message: as it
        is sent now)."""
        first = self.first_result[index]
        if first < len(self.r_block) and self.r_message[first] == index:
            whole = self.r_now[first]
            if isinstance(whole, Message):
                return whole
        results = iter(range(first, len(self.r_block)))

        def now(_block: ToolResultBlock, _index: int) -> ToolResultBlock | None:
            result = next(results)
            sent = self.r_now[result]
            assert isinstance(sent, ToolResultBlock)
            return None if self.r_level[result] == FRESH else sent

        return rewrite_results(self.items[index], index, now)[0]

    def _drop(self, point: int, low: int) -> None:
        """Move the cut to the first user text message after which the request is at the low-water mark (or to
        the deepest one there is, at the latest the start of the current turn), keeping the user text of what
        is dropped."""
        note = 0 if self.cut else estimate_message_tokens(DROPPED_NOTE)
        k = bisect_right(self.boundaries, self.cut)
        removed = 0
        index = self.cut
        best: tuple[int, int] | None = None
        while k < len(self.boundaries) and self.boundaries[k] <= point:
            boundary = self.boundaries[k]
            while index < boundary:
                if not self.user_text[index]:
                    removed += self.sizes[index]
                index += 1
            best = (boundary, removed)
            if self.kept - removed + note <= low:
                break
            k += 1
        if best is None:
            return
        boundary, removed = best
        self.front.extend(self.items[i] for i in range(self.cut, boundary) if self.user_text[i])
        self.kept += note - removed
        self.cut = boundary


_replays: list[_Replay] = []
_calls = 0


def _replay(messages: Sequence[Message], options: CompactOptions, drop_only: bool) -> _Replay:
    """The replay `messages` continue (a new one when none does)."""
    global _calls
    _calls += 1
    best = next(  # the most recently continued first: the last call's is the likeliest
        (
            r
            for r in sorted(_replays, key=lambda r: -r.used)
            if r.options == options and r.drop_only == drop_only and r.extends(messages)
        ),
        None,
    )
    if best is None:
        best = _Replay(options, drop_only)
        _replays.append(best)
    best.used = _calls
    fresh = _calls - STALE_CALLS
    _replays[:] = [r for r in _replays if r.used >= fresh][-MAX_PLANS:]
    if best not in _replays:
        _replays.append(best)
    return best


_recent: list[Sequence[Message]] = []
"""The last outputs of `make_room`: ③ leaves them as they are (② already ran the whole plan)."""


def make_room(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """② (v2): demote, clear and drop as replayed over every call point; the same list when nothing changed."""
    out = _plan(messages, options, drop_only=False)
    _recent[:] = [*_recent[-3:], out]
    return out


def drop_turns(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    """③ (v2): nothing after v2's ② (it ran the whole plan); otherwise (a replaced ②) the drops alone."""
    if any(out is messages for out in _recent):
        return messages
    return _plan(messages, options, drop_only=True)


def _plan(messages: Sequence[Message], options: CompactOptions, drop_only: bool) -> Sequence[Message]:
    if not options.enabled or not messages:
        return messages
    total = outbound_tokens(messages)
    if total <= options.threshold_tokens:
        return messages  # no earlier point can have been over it either: nothing was ever done
    replay = _replay(messages, options, drop_only)
    replay.run(messages)
    out = replay.output(messages)
    if out is not messages and enabled():
        _trace(messages, out, replay, total)
    return out


def _trace(messages: Sequence[Message], out: Sequence[Message], replay: _Replay, total: int) -> None:
    """The trace lines of a call whose request v2 changed (counting walks the history: only when tracing)."""
    tail = messages[replay.cut :]
    sent = out[len(out) - len(tail) :]
    blocks: Callable[[Sequence[Message]], chain[object]] = lambda ms: chain.from_iterable(m.content for m in ms)  # noqa: E731
    changed = sum(map(is_not, blocks(sent), blocks(tail)))
    if changed:
        levels = [replay.r_level[r] for r in range(len(replay.r_block)) if replay.r_message[r] >= replay.cut]
        trace("compact.micro", replaced=levels.count(CLEARED), demoted=levels.count(DEMOTED))
        trace(
            "compact.run",
            stage="micro",
            before=len(messages),
            after=len(messages),
            estimatedTokens=total,
            overThreshold=total > replay.options.threshold_tokens,
            strategy="micro",
        )
    if replay.cut:
        trace(
            "compact.run",
            stage="retain",
            before=len(messages),
            after=len(out),
            droppedMessages=replay.cut - len(replay.front),
            keptUserMessages=len(replay.front),
            estimatedTokens=replay.kept,
            overThreshold=replay.kept > replay.options.threshold_tokens,
            strategy="retain",
        )
