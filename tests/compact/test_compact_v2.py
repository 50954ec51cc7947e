"""Profile v2 of the outbound pipeline, stage by stage: results shaped per tool and sized to the window (①),
room made rarely and deeply, oldest first, with every user message kept when turns are dropped (② ③), the
cache breakpoints that go with it, and the options that choose it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import pairwise
from typing import Any

import msgspec
import pytest

from react_agent_mini.compact.economy import DROPPED_NOTE, DROPPED_NOTE_TEXT, outbound_tokens
from react_agent_mini.compact.options import CompactOptions, v2_fresh_tokens, v2_threshold
from react_agent_mini.compact.pipeline import (
    MICROCOMPACT_NOTE,
    TRUNCATION_NOTE,
    apply_retain_tail_if_needed,
    apply_tool_result_budget,
    compact_messages,
)
from react_agent_mini.compact.shape import cut_entries
from react_agent_mini.compact.tokens import estimate_tokens
from react_agent_mini.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from react_agent_mini.providers.anthropic import AnthropicProvider, to_anthropic_messages
from react_agent_mini.providers.base import ModelRequest
from react_agent_mini.read_result import ReadResult
from react_agent_mini.result_details import ToolDetails
from react_agent_mini.search_result import SearchResult

from ..fakes.fake_llm import validate_anthropic
from .test_compact_head_tail import middle_of, split, the_head


def opts(**overrides: Any) -> CompactOptions:
    """v2's options from an empty environment plus overrides."""
    return CompactOptions.from_env({}, **overrides)


def turn(i: int, name: str, content: str, *, details: ToolDetails | None = None, **tool_input: Any) -> list[Message]:
    """A user message, a tool call and its result (with the data its tool gave, `details`), and an answer."""
    use = ToolUseBlock(f"t{i}", name, tool_input or {"file_path": f"src/m{i}.py"})
    return [
        user_text(f"request {i}: look at m{i}"),
        Message("assistant", (TextBlock(f"Looking at m{i}."), use)),
        Message("user", (ToolResultBlock(use.id, content, details=details),)),
        Message("assistant", (TextBlock(f"m{i} is fine. " * 20),)),
    ]


def code(lines: int, tag: str = "") -> str:
    return "\n".join(f"{n}\tdef function_{tag}{n}(value):  return value * {n}" for n in range(1, lines + 1))


def session(turns: int, lines: int = 120) -> list[Message]:
    return [m for i in range(turns) for m in turn(i, "Read", code(lines, f"m{i}_"))]


def results(messages: Sequence[Message]) -> list[ToolResultBlock]:
    return [r for m in messages for r in m.tool_results]


def assert_valid(messages: Sequence[Message]) -> None:
    assert messages and messages[0].role == "user"
    for i, message in enumerate(messages):
        if message.tool_uses:
            assert [r.tool_use_id for r in messages[i + 1].tool_results] == [u.id for u in message.tool_uses]
        if message.tool_results:
            assert [u.id for u in messages[i - 1].tool_uses] == [r.tool_use_id for r in message.tool_results]


def users(messages: Sequence[Message]) -> list[Message]:
    return [m for m in messages if m.is_user_text and not m.meta]


# ---- the options ----


def test_v2_is_the_default_and_seed_is_one_setting_away() -> None:
    assert CompactOptions().profile == "v2" == CompactOptions.from_env({}).profile
    seed = CompactOptions.from_env({"COMPACT_PROFILE": "seed"})
    assert seed == CompactOptions.v4()
    assert (seed.threshold_chars, seed.max_tool_result_chars, seed.micro_keep_recent) == (80_000, 4000, 4)
    assert (seed.micro_min_chars, seed.max_messages, seed.low_water_percent) == (500, 40, 0)
    assert CompactOptions.from_env({"COMPACT_PROFILE": "SEED "}).profile == "seed"
    assert CompactOptions.from_env({"COMPACT_PROFILE": "nonsense"}).profile == "v2"


@pytest.mark.parametrize("window", [8_192, 32_000, 128_000, 200_000, 1_047_576])
def test_v2_sizes_itself_to_the_window(window: int) -> None:
    options = CompactOptions(window_tokens=window)
    assert options.threshold_tokens == v2_threshold(window) <= min(60_000, window * 40 // 100)
    assert options.fresh_result_tokens == v2_fresh_tokens(window, options.threshold_tokens)
    assert options.fresh_result_tokens <= options.threshold_tokens * 40 // 100
    assert options.fresh_result_tokens <= window * 12 // 100
    assert options.low_water_percent == 40


def test_v2_reads_the_threshold_in_characters_as_four_per_token() -> None:
    options = CompactOptions.from_env({"COMPACT_THRESHOLD_CHARS": "100000"})
    assert options.threshold_tokens == 25_000
    tightened = msgspec.structs.replace(opts(), threshold_chars=8000)  # what a refusal's tightening does
    assert tightened.threshold_tokens == 2000


# ---- ① shaped per tool, sized to the window ----


def test_a_30_kb_result_goes_whole_at_a_128k_window() -> None:
    history = turn(0, "Read", code(700))  # ≈ 30 KB of numbered code
    assert len(history[2].tool_results[0].content) > 30_000
    assert apply_tool_result_budget(history, opts()) is history
    cut = apply_tool_result_budget(history, CompactOptions.v4())
    assert len(cut[2].tool_results[0].content) < 4200  # what the seed sent


def test_a_long_read_keeps_whole_lines_and_says_where_to_read_on() -> None:
    history = turn(0, "Read", code(3000), details=ReadResult(1, 3000, 3000), file_path="src/big.py")
    options = opts(fresh_result_tokens=5000)
    content = apply_tool_result_budget(history, options)[2].tool_results[0].content
    assert estimate_tokens(content) <= 5000
    kept, note = content.split(TRUNCATION_NOTE)
    lines = kept.rstrip("\n").split("\n")
    assert lines == code(len(lines)).split("\n")  # whole lines, from the first
    assert f"Read src/big.py with offset={len(lines) + 1}." in note


def test_a_long_bash_result_keeps_head_and_tail() -> None:
    output = "\n".join(str(n) for n in range(1, 50_001))
    history = turn(0, "Bash", output, command="seq 1 50000")
    content = apply_tool_result_budget(history, opts(fresh_result_tokens=4000))[2].tool_results[0].content
    assert content.startswith("1\n2\n3\n") and content.endswith("\n49999\n50000")
    assert re.search(r"\[… [\d,]+ characters \([\d,]+ lines\) cut from the middle by compaction", content)
    assert estimate_tokens(content) <= 4000


def test_grep_keeps_whole_entries_and_counts_them() -> None:
    entries = [f"src/m{n}.py:{n}:    return value_{n}" for n in range(250)]
    content = "\n".join([*entries, "[Showing results 1..250 of 1234. Use offset=250 to see more.]"])
    history = turn(0, "Grep", content, details=SearchResult(250, 1234, mode="content"), pattern="return", path="src")
    out = apply_tool_result_budget(history, opts(fresh_result_tokens=600))[2].tool_results[0].content
    *shown, note = out.split("\n")
    assert shown == entries[: len(shown)] and 10 < len(shown) < 250
    assert f"{len(shown)} of these 250 entries shown (results 1..{len(shown)} of 1234)" in note
    assert f"call Grep again with offset={len(shown)}" in note


def test_glob_entries_are_cut_with_their_total() -> None:
    content = "\n".join(f"src/pkg/module_{n}.py" for n in range(100))
    content += "\n(Showing 100 of 900 matches, newest first. Narrow the pattern or the path to see the rest.)"
    out = cut_entries(content, 800, "Glob", SearchResult(100, 900, mode="glob"))
    *shown, note = out.split("\n")
    assert all(line.startswith("src/pkg/module_") for line in shown)
    assert f"(results 1..{len(shown)} of 900)" in note and "narrow the pattern or the path" in note


def test_the_cap_is_in_tokens_so_chinese_is_cut_where_it_costs() -> None:
    english = "\n".join(f"line {n} says something ordinary" for n in range(2000))
    chinese = "\n".join(f"第{n}行说的是一些很普通的事情" for n in range(2000))
    options = opts(fresh_result_tokens=3000)
    sent = [
        apply_tool_result_budget(turn(0, "mcp__docs__fetch", text, url="x"), options)[2].tool_results[0].content
        for text in (english, chinese)
    ]
    assert all(estimate_tokens(s) <= 3000 for s in sent)
    assert len(sent[1]) < len(sent[0]) // 2  # fewer characters of Chinese fit the same tokens


def test_shaping_is_stable_and_leaves_short_results_alone() -> None:
    history = [*turn(0, "Read", code(3000)), *turn(1, "Read", "short")]
    options = opts(fresh_result_tokens=5000)
    once = apply_tool_result_budget(history, options)
    assert apply_tool_result_budget(once, options) is once
    assert once[6] is history[6] and apply_tool_result_budget(history, options)[2] is once[2]


# ---- ② ③ room made rarely, deeply, oldest first; the user's words kept ----


def test_old_turns_are_dropped_but_every_user_message_stays_in_order() -> None:
    history = session(60)
    options = opts(threshold_chars=40_000)  # 10,000 tokens
    out = compact_messages(tuple(history), options)
    assert_valid(out)
    assert out[0] is DROPPED_NOTE and out[0].text == DROPPED_NOTE_TEXT
    assert users(out) == users(history)  # the very same messages, every one, in order
    assert [m for m in out if m is DROPPED_NOTE] == [DROPPED_NOTE]
    assert outbound_tokens(out) <= options.threshold_tokens
    assert history == session(60)  # outbound only: the history is untouched


def test_clearing_comes_before_dropping_and_uses_the_seeds_placeholder() -> None:
    history = session(8)
    out = compact_messages(tuple(history), opts(threshold_chars=40_000))
    assert len(out) == len(history)  # clearing was enough: nothing dropped
    cleared = [r.content for r in results(out) if r.content.startswith(MICROCOMPACT_NOTE)]
    assert cleared and cleared[0] == "[Old tool result content cleared] tool=Read src/m0.py"
    assert results(out)[-1] is results(history)[-1]  # the newest result whole


def test_the_newest_results_stay_whole_however_many_were_asked_for() -> None:
    uses = [ToolUseBlock(f"p{i}", "Read", {"file_path": f"p{i}.py"}) for i in range(6)]  # more than keep_recent
    batch = [Message("assistant", tuple(uses)), Message("user", tuple(ToolResultBlock(u.id, code(60)) for u in uses))]
    history = [*session(3), user_text("read six"), *batch]
    options = opts(threshold_chars=40_000)  # 10,000 tokens: the six results take half of it
    assert options.threshold_tokens // 2 < outbound_tokens(batch) <= options.threshold_tokens
    out = compact_messages(tuple(history), options)
    assert not any(r is results(history)[0] for r in results(out))  # room was made...
    assert out[-1] is history[-1]  # ...but not from what the model just asked for, all of it


def test_a_batch_bigger_than_the_threshold_keeps_only_its_newest_result_whole() -> None:
    uses = [ToolUseBlock(f"p{i}", "Read", {"file_path": f"p{i}.py"}) for i in range(10)]
    batch = [Message("assistant", tuple(uses)), Message("user", tuple(ToolResultBlock(u.id, code(40)) for u in uses))]
    history = [user_text("read ten"), *batch]
    options = opts(threshold_chars=8000)  # 2,000 tokens (a refusal stated a 4,000-token window)
    out = compact_messages(tuple(history), options)
    assert outbound_tokens(out) <= options.threshold_tokens
    assert out[-1].tool_results[-1] is batch[1].tool_results[-1]


def replay_calls(history: list[Message], options: CompactOptions) -> list[tuple[int, Sequence[Message]]]:
    """The request at every call point of a growing history (after each user message)."""
    out = []
    for length in range(1, len(history) + 1):
        if history[length - 1].role == "user":
            out.append((length, compact_messages(tuple(history[:length]), options)))
    return out


def test_between_cuts_each_request_extends_the_last() -> None:
    history = session(40)
    options = opts(threshold_chars=60_000)
    calls = replay_calls(history, options)
    grew = cuts = 0
    for (before, previous), (length, current) in pairwise(calls):
        added = apply_tool_result_budget(tuple(history[:length]), options)[before:length]
        if list(current) == [*previous, *added]:
            grew += 1
        else:
            cuts += 1
            assert outbound_tokens([*previous, *added]) > options.threshold_tokens  # only over it does it act
    assert cuts and grew > 4 * cuts


def test_a_cut_says_which_prefix_it_kept_and_the_breakpoints_follow() -> None:
    history = session(60)
    options = opts(threshold_chars=40_000)
    calls = replay_calls(history, options)
    for (_, previous), (_, current) in pairwise(calls):
        points: tuple[int, ...] = getattr(current, "cache_points", ())
        for point in points:
            assert 0 <= point < len(current)
            if point in getattr(previous, "cache_points", ()):
                assert list(current[: point + 1]) == list(previous[: point + 1])  # nothing before it moved
    request = ModelRequest("system", calls[-1][1], ())
    body = AnthropicProvider(api_key="k", base_url="http://x", model="m").build_body(request)
    validate_anthropic(body)  # at most 4 breakpoints, pairing intact
    marked = [i for i, m in enumerate(body["messages"]) if any("cache_control" in b for b in m["content"])]
    assert len(marked) == 1 + len(calls[-1][1].cache_points)  # type: ignore[attr-defined]


def test_two_mid_request_breakpoints_take_the_tools_breakpoint_s_place() -> None:
    from react_agent_mini.compact.economy import Outbound
    from react_agent_mini.tools.spec import ToolSpec

    messages = Outbound(
        [user_text(f"u{i}") if i % 2 == 0 else Message("assistant", (TextBlock("a"),)) for i in range(7)]
    )
    messages.cache_points = (2, 4)
    spec = ToolSpec("Echo", "echo", {"type": "object", "properties": {}})
    body = AnthropicProvider(api_key="k", base_url="http://x", model="m").build_body(
        ModelRequest("sys", messages, (spec,))
    )
    validate_anthropic(body)
    assert "cache_control" not in body["tools"][-1] and "cache_control" in body["system"][0]
    assert [i for i, m in enumerate(body["messages"]) if "cache_control" in m["content"][-1]] == [2, 4, 6]
    plain = to_anthropic_messages(list(messages))  # no points: the tail only, as before
    assert [i for i, m in enumerate(plain) if "cache_control" in m["content"][-1]] == [6]


def test_a_replaced_microcompact_still_gets_the_drops_from_retain() -> None:
    history = session(60)
    options = opts(threshold_chars=40_000)
    out = apply_retain_tail_if_needed(apply_tool_result_budget(tuple(history), options), options)
    assert out[0] is DROPPED_NOTE and users(out) == users(history)
    assert_valid(out)


def test_a_request_compacted_again_gets_no_second_note() -> None:
    history = session(60)
    options = opts(threshold_chars=40_000)
    once = compact_messages(tuple(history), options)
    again = compact_messages(list(once), msgspec.structs.replace(options, threshold_chars=20_000))
    assert [m for m in again if m is DROPPED_NOTE] == [DROPPED_NOTE] and users(again) == users(history)
    assert_valid(again)


def test_compact_0_and_small_histories_are_left_alone() -> None:
    history = session(3)
    assert compact_messages(history, opts()) is history
    assert compact_messages(session(60), opts(enabled=False)) == session(60)


def test_an_older_bash_result_cut_again_still_says_exactly_what_is_missing() -> None:
    from react_agent_mini.compact.shape import demoted, fresh_cut

    output = "\n".join(str(n) for n in range(1, 50_001))
    use = ToolUseBlock("b", "Bash", {"command": "seq 1 50000"})
    fresh = fresh_cut(ToolResultBlock("b", output), 4000, use)
    assert fresh is not None
    older = demoted(fresh, 1000, use)
    assert older is not None and len(older.content) <= 1000
    head, chars, lines, tail = split(older.content)
    middle = middle_of(output, the_head(head, output), tail)
    assert (chars, lines) == (len(middle), middle.count("\n"))  # both cuts, and Bash's, counted as one


def test_a_refusal_s_tightened_threshold_also_shrinks_the_fresh_cap() -> None:
    options = opts()
    assert options.fresh_tokens == options.fresh_result_tokens == 15_360
    tightened = msgspec.structs.replace(options, threshold_chars=2 * 16_000)  # session._fit_window, 16k window
    assert tightened.fresh_tokens == 8000 * 40 // 100
    history = turn(0, "Read", code(700))
    assert apply_tool_result_budget(history, options) is history
    sent = apply_tool_result_budget(history, tightened)[2].tool_results[0].content
    assert estimate_tokens(sent) <= 3200
