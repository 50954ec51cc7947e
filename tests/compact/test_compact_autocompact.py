"""Autocompact with a scripted summariser: when it runs, the rewritten history's shape, the user's messages kept
verbatim, the tail cut at a user-text boundary, the circuit breaker, thrash detection, and the summary request."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent_mini.compact.autocompact import (
    COMPACT_BOUNDARY,
    EMPTY_SUMMARY_ERROR,
    SUMMARIZER_SYSTEM,
    SUMMARY_HEADER,
    SUMMARY_INSTRUCTIONS,
    AutoCompactConfig,
    AutoCompactState,
    check_autocompact,
    compact_now,
    maybe_autocompact,
    model_summarizer,
    plan_compaction,
    render_history,
    rewritten_history,
    summary_request,
)
from react_agent_mini.compact.tokens import estimate_messages_tokens
from react_agent_mini.events import ModelEvent, ModelResponse, TextDelta
from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, Usage, user_text
from react_agent_mini.providers.base import ModelRequest

from .test_compact_properties import assert_valid, histories


class ScriptedSummarizer:
    """Answers each call from a list (the last answer repeats); an exception is raised instead of returned."""

    def __init__(self, *answers: str | Exception) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[str, list[Message]]] = []

    async def __call__(self, system: str, messages: list[Message]) -> str:
        self.calls.append((system, messages))
        answer = self.answers[min(len(self.calls), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


def turn(i: int, *, result: str = "", lang: str = "en") -> list[Message]:
    """One user turn: the request, a Read and its result, the answer."""
    request = f"请检查 module_{i}.py 并修复错误 {i}" if lang == "zh" else f"please check module_{i}.py and fix bug {i}"
    use = ToolUseBlock(f"c{i}", "Read", {"file_path": f"src/module_{i}.py"})
    return [
        user_text(request),
        Message("assistant", (TextBlock(f"Reading module {i}."), use)),
        Message("user", (ToolResultBlock(f"c{i}", result or f"def f{i}():\n    return {i}\n" * 40),)),
        Message("assistant", (TextBlock(f"Fixed bug {i} in module_{i}.py."),)),
    ]


def session(turns: int = 8) -> list[Message]:
    out: list[Message] = [user_text("# Project context\nUse pytest.", meta=True)]
    for i in range(turns):
        out += turn(i, lang="zh" if i % 2 else "en")
    return out


def config(**overrides: Any) -> AutoCompactConfig:
    return AutoCompactConfig.from_env({}, **{"window_tokens": 4000, **overrides})


CONTEXT = (user_text("# Project context\nUse pytest.", meta=True), user_text("<skill name='tdd'>…</skill>", meta=True))


def user_typed(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.is_user_text and not m.meta]


# ---- deciding ----


def test_check_autocompact_reasons() -> None:
    state = AutoCompactState()
    cfg = config(percent=80)  # trigger at 3200 tokens
    assert cfg.trigger_tokens == 3200
    assert check_autocompact(3200, cfg, state) == "below_threshold"  # strictly above, as the seed's thresholds
    assert check_autocompact(3201, cfg, state) is None
    assert check_autocompact(9999, config(compact_enabled=False), state) == "compact_disabled"
    assert check_autocompact(9999, config(auto_enabled=False), state) == "autocompact_disabled"
    state.consecutive_failures = 3
    assert check_autocompact(9999, cfg, state) == "circuit_open"


def test_config_from_env() -> None:
    cfg = AutoCompactConfig.from_env({}, model="deepseek-chat")
    assert (cfg.compact_enabled, cfg.auto_enabled, cfg.percent, cfg.window_tokens) == (True, True, 80, 128_000)
    assert AutoCompactConfig.from_env({"COMPACT": "0"}).compact_enabled is False
    assert AutoCompactConfig.from_env({"AUTOCOMPACT": "0"}).auto_enabled is False
    assert AutoCompactConfig.from_env({"AUTOCOMPACT": "false"}).auto_enabled is True
    assert AutoCompactConfig.from_env({"AUTOCOMPACT_PERCENT": "65"}).percent == 65
    assert AutoCompactConfig.from_env({"AUTOCOMPACT_PERCENT": "150"}).percent == 100
    assert AutoCompactConfig.from_env({"AUTOCOMPACT_PERCENT": "65%"}).percent == 80
    assert AutoCompactConfig.from_env({"CONTEXT_WINDOW_TOKENS": "32000"}, model="claude-x").window_tokens == 32_000
    assert AutoCompactConfig.from_env({}, model="claude-sonnet-4-5").window_tokens == 200_000
    assert AutoCompactConfig.from_env({"AUTOCOMPACT_PERCENT": "65"}, percent=90).percent == 90  # options win


# ---- the rewrite ----


async def test_rewritten_history_shape() -> None:
    history = session(8)
    summarize = ScriptedSummarizer("The agent fixed bugs 0-5 in src/module_0..5.py.")
    state = AutoCompactState()
    result = await maybe_autocompact(
        history, 5000, config=config(), state=state, summarize=summarize, context=lambda: CONTEXT
    )
    assert result.outcome == "success" and result.compacted and result.messages is not None
    new = result.messages
    assert new[0].meta and new[0].text.startswith(COMPACT_BOUNDARY)
    assert new[1:3] == CONTEXT  # re-injected
    assert new[3].meta and new[3].text.startswith(SUMMARY_HEADER + "\nThe agent fixed bugs 0-5")
    kept = new[4 : 4 + result.kept_user_messages]
    tail = new[4 + result.kept_user_messages :]
    assert len(tail) == result.tail_messages and result.summarized_messages + len(tail) == len(history)
    # The tail is the history's end, the very same objects, starting at a message the user typed.
    assert all(a is b for a, b in zip(tail, history[len(history) - len(tail) :], strict=True))
    assert tail[0].is_user_text and not tail[0].meta
    # Every message the user typed is there exactly once, verbatim, in order.
    assert [id(m) for m in user_typed(new)] == [id(m) for m in user_typed(history)]
    assert all(m in user_typed(history) for m in kept)
    assert_valid(new)
    assert result.tokens_after < result.tokens_before
    assert state.compactions == 1 and state.consecutive_failures == 0


async def test_the_request_shows_older_history_once_and_nothing_of_the_tail() -> None:
    history = session(8)
    summarize = ScriptedSummarizer("summary")
    result = await maybe_autocompact(
        history, 5000, config=config(), state=AutoCompactState(), summarize=summarize, context=lambda: CONTEXT
    )
    system, messages = summarize.calls[0]
    assert system == SUMMARIZER_SYSTEM
    assert len(messages) == 1 and messages[0].role == "user"
    request = messages[0].text
    assert request.startswith(SUMMARY_INSTRUCTIONS)
    older = history[: result.summarized_messages]
    for message in older:
        for block in message.content:
            if isinstance(block, TextBlock) and not message.meta:
                assert request.count(block.text) == 1  # each text once: no duplicated rendering
    assert "# Project context" not in request  # re-injected anyway, so not summarised
    tail_texts = [m.text for m in history[result.summarized_messages :] if m.text]
    assert not any(text in request for text in tail_texts)
    assert "Assistant called Read" in request and "Result of Read" in request


async def test_tail_never_starts_with_a_tool_result() -> None:
    # One user turn with many tool rounds at the end, longer than the tail may be: the tail starts at one of that
    # turn's model calls (never at a tool result), and the turn's request is kept word for word before it.
    history = [*session(3), user_text("now refactor everything")]
    for i in range(10, 16):
        history += turn(i)[1:3]
    result = await maybe_autocompact(
        history, 5000, config=config(tail_percent=1), state=AutoCompactState(), summarize=ScriptedSummarizer("s")
    )
    assert result.messages is not None
    tail = result.messages[-result.tail_messages :]
    assert tail[0].role == "assistant" and tail[0].tool_uses and tail == tuple(history[-2:])
    before = result.messages[: -result.tail_messages]
    assert before[-1].text == "now refactor everything" and not before[-1].meta
    assert_valid(result.messages)


async def test_a_long_turn_keeps_the_calls_that_fit_the_tail() -> None:
    # The tail keeps as many of the turn's latest model calls as fit its share of the window.
    history = [*session(2), user_text("now refactor everything")]
    for i in range(10, 16):
        history += turn(i)[1:3]
    round_tokens = estimate_messages_tokens(history[-2:])
    window = 100 * (3 * round_tokens + round_tokens // 2) // 15  # three rounds and a half fit 15% of it
    settings = config(window_tokens=window)
    result = await maybe_autocompact(
        history, window, config=settings, state=AutoCompactState(), summarize=ScriptedSummarizer("s")
    )
    assert result.messages is not None
    assert result.messages[-result.tail_messages :] == tuple(history[-6:])
    assert_valid(result.messages)


@settings(max_examples=80, deadline=None)
@given(histories(), st.integers(200, 20_000), st.integers(0, 60))
def test_rewrite_is_always_valid_and_keeps_every_user_message(
    history: list[Message], window: int, tail_percent: int
) -> None:
    cfg = config(window_tokens=window, tail_percent=tail_percent)
    plan = plan_compaction(history, cfg)
    if plan is None:
        return
    assert plan.tail and plan.tail[0].is_user_text and not plan.tail[0].meta
    assert list(plan.older) + list(plan.tail) == history
    new = rewritten_history(plan, "summary", CONTEXT)
    assert_valid(new)
    assert [id(m) for m in user_typed(new)] == [id(m) for m in user_typed(history)]
    # The tail starts at the earliest user message whose suffix fits the budget; the current turn always stays.
    budget = window * tail_percent // 100
    starts = [i for i, m in enumerate(history) if m.is_user_text and not m.meta]
    cut = len(plan.older)
    if cut != starts[-1]:
        assert estimate_messages_tokens(plan.tail) <= budget
    earlier = [i for i in starts if i < cut]
    if earlier:
        assert estimate_messages_tokens(history[earlier[-1] :]) > budget


async def test_nothing_to_compact() -> None:
    summarize = ScriptedSummarizer("s")
    single_turn = turn(0)
    for history in ([user_text("hi")], single_turn, [user_text("a"), user_text("b")]):
        result = await maybe_autocompact(history, 10**6, config=config(), state=AutoCompactState(), summarize=summarize)
        assert result.outcome == "nothing_to_compact" and result.messages is None
    assert summarize.calls == []


async def test_a_second_compaction_keeps_the_first_ones_user_messages() -> None:
    state = AutoCompactState()
    first = await maybe_autocompact(
        session(8), 5000, config=config(), state=state, summarize=ScriptedSummarizer("first summary")
    )
    assert first.messages is not None
    grown = [*first.messages]
    for i in range(20, 28):
        grown += turn(i)
    summarize = ScriptedSummarizer("second summary")
    second = await maybe_autocompact(grown, 10**6, config=config(), state=state, summarize=summarize)
    assert second.messages is not None
    assert [m.text for m in user_typed(second.messages)] == [m.text for m in user_typed(grown)]
    assert "first summary" in summarize.calls[0][1][0].text  # the earlier summary is summarised again
    assert sum(m.text.startswith(COMPACT_BOUNDARY) for m in second.messages) == 1


# ---- failures: the breaker, thrash, empty summaries ----


async def test_breaker_opens_after_three_failures_and_the_session_keeps_it() -> None:
    state = AutoCompactState()  # owned by the session: the same object on every call
    summarize = ScriptedSummarizer(RuntimeError("provider said 500"))
    history = session(8)
    outcomes = []
    for _ in range(4):
        result = await maybe_autocompact(history, 5000, config=config(), state=state, summarize=summarize)
        outcomes.append(result.outcome)
        assert result.messages is None  # the history stays; the pipeline's ③ is the fallback
    assert outcomes == ["failed", "failed", "failed", "circuit_open"]
    assert len(summarize.calls) == 3 and state.last_error == "provider said 500"
    # Still open on the next user turn (upstream rebuilt the counter per call, so it never tripped).
    assert (await maybe_autocompact(history, 9000, config=config(), state=state, summarize=summarize)).outcome == (
        "circuit_open"
    )
    # /compact still works when the user asks, and a success closes the breaker.
    manual = await compact_now(history, config=config(), state=state, summarize=ScriptedSummarizer("ok"))
    assert manual.outcome == "success" and state.consecutive_failures == 0


async def test_a_success_resets_the_failure_count() -> None:
    state = AutoCompactState()
    summarize = ScriptedSummarizer(RuntimeError("x"), RuntimeError("y"), "fine")
    history = session(8)
    for _ in range(2):
        await maybe_autocompact(history, 5000, config=config(), state=state, summarize=summarize)
    assert state.consecutive_failures == 2
    result = await maybe_autocompact(history, 5000, config=config(), state=state, summarize=summarize)
    assert result.outcome == "success" and state.consecutive_failures == 0


@pytest.mark.parametrize("empty", ["", "   \n"])
async def test_an_empty_summary_is_a_failure(empty: str) -> None:
    state = AutoCompactState()
    result = await maybe_autocompact(
        session(8), 5000, config=config(), state=state, summarize=ScriptedSummarizer(empty)
    )
    assert result.outcome == "failed" and result.error == EMPTY_SUMMARY_ERROR
    assert state.consecutive_failures == 1 and result.messages is None


async def test_thrash_is_reported_when_used_is_between_trigger_and_rearm() -> None:
    state = AutoCompactState()
    state.rearm_tokens = 3500
    cfg = config(percent=80)  # trigger 3200
    assert check_autocompact(3300, cfg, state) == "thrash"
    assert check_autocompact(3500, cfg, state) is None


async def test_a_summary_that_cannot_get_under_the_threshold_counts_and_is_not_repeated_at_once() -> None:
    state = AutoCompactState()
    # The user's own messages alone are over the threshold: compacting cannot get under it.
    history: list[Message] = []
    for i in range(6):
        history += [user_text(f"requirement {i}: " + "must hold " * 300), Message("assistant", (TextBlock("ok"),))]
    history.append(user_text("go"))
    cfg = config(window_tokens=4000, percent=50, rearm_percent=10)
    summarize = ScriptedSummarizer("s")
    result = await maybe_autocompact(history, 10_000, config=cfg, state=state, summarize=summarize)
    assert result.outcome == "success" and result.messages is not None
    assert result.tokens_after > cfg.trigger_tokens
    assert state.consecutive_failures == 1 and "still over" in state.last_error
    assert state.rearm_tokens == result.tokens_after + 400
    # Thrash guard: still over the threshold, but it has not grown since: no second summary right away.
    compacted = list(result.messages)
    again = await maybe_autocompact(compacted, result.tokens_after, config=cfg, state=state, summarize=summarize)
    assert again.outcome == "thrash" and len(summarize.calls) == 1
    # Once it grew by a tenth of the window it may try again.
    grown = await maybe_autocompact(
        compacted + turn(50), state.rearm_tokens, config=cfg, state=state, summarize=summarize
    )
    assert grown.outcome == "success" and len(summarize.calls) == 2


# ---- manual /compact ----


async def test_compact_now_ignores_switches_and_threshold_and_uses_the_focus() -> None:
    summarize = ScriptedSummarizer("focused summary")
    cfg = config(compact_enabled=False, auto_enabled=False)
    result = await compact_now(
        session(8), config=cfg, state=AutoCompactState(), summarize=summarize, focus="  the parser bug  "
    )
    assert result.outcome == "success" and result.trigger == "manual" and result.focus == "  the parser bug  "
    assert "Focus the summary on: the parser bug" in summarize.calls[0][1][0].text
    record = result.boundary_record()
    assert record["type"] == "compact_boundary" and record["trigger"] == "manual"
    assert record["summarized_messages"] == result.summarized_messages and "focus" in record


async def test_compact_now_summarises_a_short_conversation_up_to_its_last_turn() -> None:
    history = turn(0) + turn(1)  # far below the window: an automatic summary would keep it all
    big = config(window_tokens=1_000_000)
    auto = await maybe_autocompact(
        history, 10**7, config=big, state=AutoCompactState(), summarize=ScriptedSummarizer("s")
    )
    assert auto.outcome == "nothing_to_compact"
    result = await compact_now(history, config=big, state=AutoCompactState(), summarize=ScriptedSummarizer("s"))
    assert result.outcome == "success" and result.messages is not None
    assert result.summarized_messages == 4 and result.tail_messages == 4
    assert list(result.messages[-4:]) == turn(1)  # the last turn stays verbatim
    assert [m.text for m in user_typed(result.messages)] == [turn(0)[0].text, turn(1)[0].text]
    single = await compact_now(turn(0), config=big, state=AutoCompactState(), summarize=ScriptedSummarizer("s"))
    assert single.outcome == "nothing_to_compact"  # one turn: nothing before it


async def test_a_failed_compact_now_does_not_count_toward_the_breaker() -> None:
    state = AutoCompactState()
    result = await compact_now(session(8), config=config(), state=state, summarize=ScriptedSummarizer(ValueError()))
    assert result.outcome == "failed" and result.error == "ValueError"
    assert state.consecutive_failures == 0


# ---- the summary request ----


def test_render_history_is_compact() -> None:
    use = ToolUseBlock("c1", "Bash", {"command": "pytest -q " + "x" * 1000})
    messages = [
        user_text("run the tests"),
        Message("assistant", (TextBlock("Running."), use)),
        Message("user", (ToolResultBlock("c1", "F" * 2000, is_error=True),)),
        user_text("skill body", meta=True),
    ]
    lines = render_history(messages, result_chars=100, input_chars=50)
    assert lines[0] == "User: run the tests"
    assert lines[1] == "Assistant: Running."
    assert lines[2].startswith("Assistant called Bash {") and "more characters]" in lines[2]
    assert lines[3].startswith("Result of Bash (error): " + "F" * 100 + "… [1900 more characters]")
    assert lines[4] == "Context: skill body"


def test_a_huge_history_is_cut_to_the_request_budget() -> None:
    history: list[Message] = []
    for i in range(300):
        history += turn(i, result="y" * 3000)
    history.append(user_text("latest"))
    cfg = config(window_tokens=20_000, request_percent=50)
    plan = plan_compaction(history, cfg)
    assert plan is not None
    request = summary_request(plan, cfg)[0].text
    assert estimate_messages_tokens([user_text(request)]) <= 10_000 + 200
    assert "lines of the conversation left out here" in request
    assert "please check module_0.py" in request  # the start is kept …
    latest = [m for m in plan.older if m.is_user_text and not m.meta][-1]
    assert latest.text in request  # … and mostly the latest work


# ---- a summariser over call_model ----


async def test_model_summarizer_takes_the_final_text_once() -> None:
    seen: list[ModelRequest] = []

    async def call_model(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        seen.append(request)
        yield TextDelta("Sum")
        yield TextDelta("mary")
        yield ModelResponse(Message("assistant", (TextBlock("Summary"),)), "end_turn", Usage(10, 2))

    summarize = model_summarizer(call_model, max_tokens=512)
    assert await summarize("sys", [user_text("please")]) == "Summary"  # not "SummarySummary" (upstream bug a)
    assert seen[0].tools == () and seen[0].system == "sys" and seen[0].max_tokens == 512


async def test_model_summarizer_without_a_response_fails() -> None:
    async def call_model(request: ModelRequest) -> AsyncIterator[ModelEvent]:
        yield TextDelta("partial")

    state = AutoCompactState()
    result = await maybe_autocompact(
        session(8), 5000, config=config(), state=state, summarize=model_summarizer(call_model)
    )
    assert result.outcome == "failed" and "without a response" in result.error
    assert state.consecutive_failures == 1
