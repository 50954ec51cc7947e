"""Properties of the outbound pipeline over random valid histories (hypothesis), and the low-water variant's
promise: the request prefix stays the same across calls until the next cut. The seed's pipeline and its
low-water option run under `COMPACT_PROFILE=seed`; profile v2 (the default) has its own properties below."""

from __future__ import annotations

import random
from collections.abc import Sequence

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent_mini.compact.budget import TRUNCATION_NOTE
from react_agent_mini.compact.economy import DROPPED_NOTE, outbound_tokens
from react_agent_mini.compact.estimate import estimate_outbound_chars, message_chars
from react_agent_mini.compact.pipeline import (
    CompactOptions,
    apply_retain_tail_if_needed,
    apply_tool_result_budget,
    compact_messages,
    microcompact_messages,
)
from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text

UNITS = ["x", "ab c ", "中", "测试，", "😀", "def f(x):\n    return x + 1\n", "é", '{"k": [1, 2]}\n']
TOOLS = ["Read", "Read", "Bash", "Grep", "Glob", "Write", "Edit", "Echo", "Skill", "mcp__srv__fetch"]
INPUTS: list[dict[str, object]] = [
    {"file_path": "src/app.py"},
    {"path": "src", "pattern": "def"},
    {"command": "ls"},
    {},
]
LONGEST_NOTE = 220  # no truncation note is longer than this


def texts(max_repeat: int) -> st.SearchStrategy[str]:
    return st.builds(lambda unit, n: unit * n, st.sampled_from(UNITS), st.integers(0, max_repeat))


@st.composite
def histories(draw: st.DrawFn) -> list[Message]:
    """Valid histories: user text (sometimes after injected context), rounds of tool calls each answered by one
    user message with every result in order, optional final assistant text; ASCII, CJK, emoji, code, JSON."""
    messages: list[Message] = []
    ids = iter(range(1_000_000))
    for _ in range(draw(st.integers(1, 7))):
        if draw(st.integers(0, 4)) == 0:
            messages.append(user_text(draw(texts(40)), meta=True))
        messages.append(user_text(draw(texts(60)) or "go"))
        for _ in range(draw(st.integers(0, 3))):
            uses = [
                ToolUseBlock(f"t{next(ids)}", draw(st.sampled_from(TOOLS)), draw(st.sampled_from(INPUTS)))
                for _ in range(draw(st.integers(1, 3)))
            ]
            lead = (TextBlock(draw(texts(30))),) if draw(st.booleans()) else ()
            messages.append(Message("assistant", (*lead, *uses)))
            answers = tuple(ToolResultBlock(u.id, draw(texts(600)), draw(st.booleans())) for u in uses)
            messages.append(Message("user", answers))
        if draw(st.booleans()):
            messages.append(Message("assistant", (TextBlock(draw(texts(80))),)))
    return messages


@st.composite
def cases(draw: st.DrawFn, low_water: bool = False) -> tuple[list[Message], CompactOptions]:
    history = draw(histories())
    size = estimate_outbound_chars(history)
    options = CompactOptions.v4(
        threshold_chars=draw(st.integers(0, size + size // 4 + 1)),
        max_tool_result_chars=draw(st.sampled_from([40, 500, 4000, 1_000_000])),
        micro_keep_recent=draw(st.integers(0, 5)),
        micro_min_chars=draw(st.sampled_from([0, 30, 500])),
        max_messages=draw(st.integers(1, 30)),
        low_water_percent=draw(st.sampled_from([30, 50, 80])) if low_water else 0,
    )
    return history, options


def assert_valid(messages: Sequence[Message]) -> None:
    """Starts with a user message; every tool_use is answered by the next message and every result answers the
    message before it."""
    assert messages and messages[0].role == "user"
    for i, message in enumerate(messages):
        calls = [u.id for u in message.tool_uses]
        if calls:
            assert i + 1 < len(messages), "a tool_use without its result"
            assert [r.tool_use_id for r in messages[i + 1].tool_results] == calls
        answers = [r.tool_use_id for r in message.tool_results]
        if answers:
            assert i > 0 and [u.id for u in messages[i - 1].tool_uses] == answers, "an orphan tool_result"


def assert_suffix_of(out: Sequence[Message], history: Sequence[Message], options: CompactOptions) -> None:
    """`out` is the history's last len(out) messages, each block equal or shortened by a stage."""
    assert len(out) <= len(history)
    originals = history[len(history) - len(out) :]
    for sent, original in zip(out, originals, strict=True):
        assert (sent.role, sent.meta, sent.id, len(sent.content)) == (
            original.role,
            original.meta,
            original.id,
            len(original.content),
        )
        for block, before in zip(sent.content, original.content, strict=True):
            if block == before:
                assert block is before  # unchanged blocks keep their identity (Read's "seen whole" relies on it)
            else:
                assert isinstance(block, ToolResultBlock) and isinstance(before, ToolResultBlock)
                assert block.tool_use_id == before.tool_use_id and block.is_error == before.is_error
                cap = options.max_tool_result_chars + LONGEST_NOTE
                assert len(block.content) <= max(len(before.content), cap)


def floor_chars(history: Sequence[Message], options: CompactOptions) -> int:
    """The estimate once ① ran and ② cleared everything it may (forced over the threshold)."""
    forced = msgspec.structs.replace(options, threshold_chars=-1, low_water_percent=0)  # seed profile: -1 is "always"
    return estimate_outbound_chars(microcompact_messages(apply_tool_result_budget(history, options), forced))


@settings(max_examples=150, deadline=None)
@given(cases())
def test_seed_pipeline_properties(case: tuple[list[Message], CompactOptions]) -> None:
    history, options = case
    snapshot = list(history)
    out = compact_messages(history, options)
    assert history == snapshot  # outbound only
    assert_valid(out)
    assert_suffix_of(out, history, options)
    if list(out) == history:
        assert out is history  # unchanged input: the very same list
    assert compact_messages(out, options) == out  # idempotent
    if floor_chars(history, options) <= options.threshold_chars:
        assert estimate_outbound_chars(out) <= options.threshold_chars  # enough was compactable
        assert len(out) == len(history)  # so ③ had nothing to do


@settings(max_examples=150, deadline=None)
@given(cases(low_water=True))
def test_low_water_pipeline_properties(case: tuple[list[Message], CompactOptions]) -> None:
    history, options = case
    out = compact_messages(history, options)
    assert_valid(out)
    assert_suffix_of(out, history, options)
    if list(out) == history:
        assert out is history
    # ③'s contract still holds at the end: over the threshold with too many messages only when no user text
    # message is left to cut at.
    if estimate_outbound_chars(out) > options.threshold_chars and len(out) > options.max_messages:
        assert not any(m.is_user_text for m in out[1:])


# ---- low water: the prefix stays put ----


def growing_session(turns: int, seed: int) -> tuple[list[Message], list[int]]:
    """A deterministic long session and the history lengths at which the model is called."""
    rnd = random.Random(seed)
    history: list[Message] = []
    calls: list[int] = []
    n = 0
    for turn in range(turns):
        history.append(user_text(f"第{turn}轮：请检查 module_{turn}.py " + "细节 " * rnd.randint(3, 30)))
        calls.append(len(history))
        for _ in range(rnd.randint(0, 3)):
            uses = []
            for _ in range(rnd.randint(1, 3)):
                n += 1
                name = rnd.choice(["Read", "Read", "Grep", "Bash", "Echo"])
                uses.append(ToolUseBlock(f"c{n}", name, {"file_path": f"src/m{n % 30}.py"}))
            history.append(Message("assistant", (TextBlock("Checking. " * rnd.randint(1, 4)), *uses)))
            sizes = {"Read": (1500, 12000), "Grep": (200, 2500), "Bash": (100, 4000), "Echo": (20, 80)}
            answers = [ToolResultBlock(u.id, "line of code\n" * (rnd.randint(*sizes[u.name]) // 13)) for u in uses]
            history.append(Message("user", tuple(answers)))
            calls.append(len(history))
        history.append(Message("assistant", (TextBlock("Done: " + "结论。" * rnd.randint(5, 80)),)))
    return history, calls


def outbound(history: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
    out = apply_tool_result_budget(history, options)
    out = microcompact_messages(out, options)
    return apply_retain_tail_if_needed(out, options)


def replay(options: CompactOptions, turns: int = 90, seed: int = 3) -> tuple[int, float, int]:
    """(calls whose request does not extend the previous one, share of characters a prefix cache serves, peak)."""
    history, calls = growing_session(turns, seed)
    previous: Sequence[Message] = ()
    breaks = 0
    total = cached = peak = 0
    for length in calls:
        out = outbound(tuple(history[:length]), options)
        common = 0
        for a, b in zip(previous, out, strict=False):
            if a != b:
                break
            common += 1
        breaks += common < len(previous)
        sizes = [message_chars(m) for m in out]
        total += sum(sizes)
        cached += sum(sizes[:common])
        peak = max(peak, sum(sizes))
        previous = out
    return breaks, cached / total, peak


def test_low_water_breaks_the_prefix_far_less_often_than_the_seed() -> None:
    seed_breaks, seed_share, seed_peak = replay(CompactOptions.v4(threshold_chars=40_000))
    low_breaks, low_share, low_peak = replay(CompactOptions.v4(threshold_chars=40_000, low_water_percent=50))
    assert seed_breaks > 100  # the seed's ③ and ② move on nearly every call once over the threshold
    assert low_breaks * 3 < seed_breaks
    assert low_share > seed_share + 0.15
    assert seed_peak <= 40_000 + 4000 and low_peak <= 40_000 + 4000  # both keep requests near the threshold


def test_low_water_prefix_is_identical_until_the_next_cut() -> None:
    """Between two calls the request only grows at its end, unless the part being sent passed the threshold at
    the second call — that is the only moment a stage may act."""
    options = CompactOptions.v4(threshold_chars=30_000, low_water_percent=50)
    history, calls = growing_session(70, seed=11)
    previous: Sequence[Message] | None = None
    acted = 0
    for before, length in zip([0, *calls], calls, strict=False):
        out = outbound(tuple(history[:length]), options)
        if previous is not None:
            added = apply_tool_result_budget(tuple(history[:length]), options)[before:]
            grown = [*previous, *added]
            if estimate_outbound_chars(grown) <= options.threshold_chars:
                assert list(out) == grown
            else:
                acted += 1
        previous = out
    assert 0 < acted < len(calls) // 3


def test_low_water_off_by_default_and_from_the_environment() -> None:
    assert CompactOptions.v4().low_water is False
    seed = {"COMPACT_PROFILE": "seed"}
    assert CompactOptions.from_env({**seed, "COMPACT_LOW_WATER_PERCENT": "50"}).low_water_percent == 50
    assert CompactOptions.from_env({**seed, "COMPACT_LOW_WATER_PERCENT": "500"}).low_water_percent == 100
    assert CompactOptions.v4(low_water_percent=100).low_water is False  # 100% would be the seed's behaviour


def test_low_water_truncation_notes_in_the_request_are_stable() -> None:
    history, calls = growing_session(10, seed=5)
    options = CompactOptions.v4(low_water_percent=50)
    first = outbound(tuple(history[: calls[-1]]), options)
    again = outbound(tuple(history[: calls[-1]]), options)
    assert first == again and any(TRUNCATION_NOTE in r.content for m in first for r in m.tool_results)


# ---- profile v2 (the default) ----


@st.composite
def v2_cases(draw: st.DrawFn) -> tuple[list[Message], CompactOptions]:
    history = draw(histories())
    size = outbound_tokens(history)
    options = CompactOptions(
        threshold_chars=4 * draw(st.integers(0, size + size // 4 + 1)),
        fresh_result_tokens=draw(st.sampled_from([10, 100, 1000, 100_000])),
        max_tool_result_chars=draw(st.sampled_from([40, 500, 4000])),
        micro_keep_recent=draw(st.integers(0, 5)),
        micro_min_chars=draw(st.sampled_from([0, 30, 500])),
        low_water_percent=draw(st.sampled_from([0, 30, 50, 80, 100])),
    )
    return history, options


def _sent_as(sent: Message, original: Message) -> bool:
    """`sent` is `original` as a stage passes it on: itself, or with some results cut or cleared."""
    if sent is original:
        return True
    if sent.is_user_text or (sent.role, sent.id, len(sent.content)) != (
        original.role,
        original.id,
        len(original.content),
    ):
        return False
    return all(
        a is b or (isinstance(a, ToolResultBlock) and isinstance(b, ToolResultBlock) and a.tool_use_id == b.tool_use_id)
        for a, b in zip(sent.content, original.content, strict=True)
    )


def assert_kept_what_the_user_wrote(out: Sequence[Message], history: Sequence[Message]) -> None:
    """Every user text message of the history is in `out`, the very same object, in order; what is dropped
    is assistant and tool traffic, from the front, and says so once; the rest is the history's tail."""
    texts = [m for m in history if m.is_user_text]
    assert [m for m in out if m.is_user_text and m is not DROPPED_NOTE] == texts
    body = out[1:] if out and out[0] is DROPPED_NOTE else out
    assert all(m is not DROPPED_NOTE for m in body)
    kept = 0  # the tail: the history's last messages, one for one
    while kept < min(len(body), len(history)) and _sent_as(body[-1 - kept], history[-1 - kept]):
        kept += 1
    front = body[: len(body) - kept]
    assert all(m.is_user_text for m in front)  # before the tail: only what the user wrote (and injected text)
    if body is out:
        assert not front and kept == len(history)  # nothing dropped: the whole history
    elif kept:
        assert body[len(body) - kept].is_user_text  # the tail starts at a user text message: pairing-safe


@settings(max_examples=150, deadline=None)
@given(v2_cases())
def test_v2_pipeline_properties(case: tuple[list[Message], CompactOptions]) -> None:
    history, options = case
    snapshot = list(history)
    out = compact_messages(history, options)
    assert history == snapshot  # outbound only
    assert_valid(out)
    assert_kept_what_the_user_wrote(out, history)
    if list(out) == history:
        assert out is history  # unchanged input: the very same list
    if outbound_tokens(out) > options.threshold_tokens:
        # Still over it only when no deeper cut was left: the tail starts at the last user text message, so no
        # user text follows the first message that is not one.
        body = out[1:] if out and out[0] is DROPPED_NOTE else out
        other = next((i for i, m in enumerate(body) if not m.is_user_text), len(body))
        assert not any(m.is_user_text for m in body[other:])
    for block in (b for m in out for b in m.content if isinstance(b, ToolResultBlock)):
        original = next(r for m in history for r in m.tool_results if r.tool_use_id == block.tool_use_id)
        assert block is original or len(block.content) < len(original.content) + LONGEST_NOTE  # only ever cut


@settings(max_examples=60, deadline=None)
@given(v2_cases())
def test_v2_requests_only_grow_until_the_threshold_is_passed(case: tuple[list[Message], CompactOptions]) -> None:
    """Replayed call by call: a request is the previous one plus what was added since, unless that would pass
    the threshold — the only moment v2 may change what it sent before."""
    history, options = case
    # Where the model is called: after a user message an assistant message follows (what a session sends).
    points = [
        i + 1 for i in range(len(history) - 1) if history[i].role == "user" and history[i + 1].role == "assistant"
    ]
    previous: Sequence[Message] | None = None
    before = 0
    for length in points:
        current = compact_messages(tuple(history[:length]), options)
        if previous is not None:
            added = list(apply_tool_result_budget(tuple(history[:length]), options)[before:length])
            grown = [*previous, *added]
            if outbound_tokens(grown) <= options.threshold_tokens:
                assert list(current) == grown
        previous, before = current, length
