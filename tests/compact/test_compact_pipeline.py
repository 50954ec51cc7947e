"""The seed's outbound pipeline, stage by stage: the upstream's acceptance tests C1-C24 ported, plus the exact
trace lines, the placeholder, the COMPACTABLE set, the strict comparisons and the environment switches."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from react_agent_mini.compact.budget import TRUNCATION_NOTE, truncation_note
from react_agent_mini.compact.estimate import estimate_outbound_chars, json_chars, utf16_len, utf16_prefix
from react_agent_mini.compact.pipeline import (
    MICROCOMPACT_NOTE,
    CompactOptions,
    apply_retain_tail_if_needed,
    apply_tool_result_budget,
    compact_messages,
    microcompact_messages,
)
from react_agent_mini.events import Terminal
from react_agent_mini.loop import QueryDeps, QueryParams, query, whole_result_ids
from react_agent_mini.messages import ImageData, Message, TextBlock, ToolResultBlock, ToolUseBlock, user_text
from react_agent_mini.read_result import ReadResult
from react_agent_mini.tools.base import ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool
from react_agent_mini.tools.builtin.read import ReadArgs, ReadTool

from ..scripted import ScriptedModel, reply

# ---- the upstream's test helpers (A16), in our types ----


def U(text: str) -> Message:
    return user_text(text)


def A(*blocks: TextBlock | ToolUseBlock | str) -> Message:
    return Message("assistant", tuple(TextBlock(b) if isinstance(b, str) else b for b in blocks))


def TR(tool_use_id: str, content: str, is_error: bool = False) -> Message:
    return Message("user", (ToolResultBlock(tool_use_id, content, is_error),))


def tool_turn(tool_use_id: str, content: str, name: str = "Read", **tool_input: Any) -> list[Message]:
    return [A(ToolUseBlock(tool_use_id, name, tool_input or {"file_path": "a.txt"})), TR(tool_use_id, content)]


def conv(n: int) -> list[Message]:
    """n × [U(问题i), A[tool_use Read], TR(结果i), A[回答i]] = 4n messages."""
    out: list[Message] = []
    for i in range(n):
        out += [U(f"问题{i}"), *tool_turn(f"toolu_{i}", f"结果{i}"), A(f"回答{i}")]
    return out


def long_history() -> list[Message]:
    """6 × [U(问题i), A[tool_use Read fi.txt], TR(BODYi: + 800 x), A(回答i)] = 24 messages."""
    out: list[Message] = []
    for i in range(6):
        out += [U(f"问题{i}"), *tool_turn(f"toolu_m{i}", f"BODY{i}:" + "x" * 800, file_path=f"f{i}.txt"), A(f"回答{i}")]
    return out


SEED = {"COMPACT_PROFILE": "seed"}
"""These are the seed's tests: they run under its profile (the default profile, v2, has its own tests)."""


def opts(**overrides: Any) -> CompactOptions:
    """The seed's options from an otherwise empty environment plus overrides (the developer's shell never leaks
    in)."""
    return CompactOptions.from_env(SEED, **overrides)


def results(messages: Sequence[Message]) -> list[ToolResultBlock]:
    return [b for m in messages for b in m.tool_results]


def first_result(message: Message) -> ToolResultBlock:
    return message.tool_results[0]


def every_result_has_its_call(messages: Sequence[Message]) -> bool:
    calls = {u.id for m in messages for u in m.tool_uses}
    return all(r.tool_use_id in calls for r in results(messages))


def trace_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("[trace]")]


# ---- ① budget (C1-C5, C11, C15) ----


def test_c1_truncates_an_oversized_result_and_appends_the_note() -> None:
    out = apply_tool_result_budget([U("读文件"), *tool_turn("toolu_1", "x" * 5000)], opts(max_tool_result_chars=4000))
    content = first_result(out[2]).content
    assert len(content) < 5000
    assert TRUNCATION_NOTE in content
    assert content.startswith("x" * 4000) and not content.startswith("x" * 4001)


def test_c2_keeps_tool_use_id_and_is_error() -> None:
    history = [U("q"), A(ToolUseBlock("toolu_e", "Read", {})), TR("toolu_e", "e" * 9000, is_error=True)]
    block = first_result(apply_tool_result_budget(history, opts(max_tool_result_chars=100))[2])
    assert block.tool_use_id == "toolu_e"
    assert block.is_error is True
    assert len(block.content) < 9000


def test_c3_the_original_messages_are_not_changed() -> None:
    history = [U("q"), *tool_turn("toolu_2", "y" * 6000)]
    snapshot = list(history)
    apply_tool_result_budget(history, opts(max_tool_result_chars=1000))
    assert history == snapshot
    assert first_result(history[2]).content == "y" * 6000


def test_c4_nothing_to_do_returns_the_same_list() -> None:
    history = [U("hi"), *tool_turn("toolu_3", "short")]
    assert apply_tool_result_budget(history, opts()) is history
    assert compact_messages(history, opts()) is history


def test_c5_short_results_and_text_pass_through_equal() -> None:
    history = [U("hello"), *tool_turn("toolu_4", "ok"), A("done")]
    assert compact_messages(history, opts()) == history


def test_c11_budget_runs_even_far_below_the_threshold() -> None:
    history = [U("q"), *tool_turn("toolu_z", "z" * 9000)]
    out = compact_messages(history, opts(max_tool_result_chars=200, threshold_chars=1_000_000))
    assert out is not history
    assert first_result(out[2]).content.startswith("z" * 200)
    assert TRUNCATION_NOTE in first_result(out[2]).content


def test_budget_limit_is_strict_and_counts_utf16_units() -> None:
    exact = [U("q"), *tool_turn("t", "中" * 100)]
    assert apply_tool_result_budget(exact, opts(max_tool_result_chars=100)) is exact  # 100 units: not over
    emoji = [U("q"), *tool_turn("t", "😀" * 60)]  # 120 UTF-16 units in 60 characters
    content = first_result(apply_tool_result_budget(emoji, opts(max_tool_result_chars=101))[2]).content
    assert content.startswith("😀" * 50) and not content.startswith("😀" * 51)  # a pair is never split
    assert "\ud83d" not in content.split(TRUNCATION_NOTE)[0][-1:]


def test_budget_is_idempotent_and_keeps_identity_on_the_second_pass() -> None:
    history = [U("q"), *tool_turn("t", "x" * 9000), *tool_turn("u", "😀" * 3000)]
    once = apply_tool_result_budget(history, opts(max_tool_result_chars=101))
    assert apply_tool_result_budget(once, opts(max_tool_result_chars=101)) is once


def test_budget_keeps_untouched_messages_and_blocks_identical() -> None:
    small = ToolResultBlock("s", "small")
    history = [
        U("q"),
        A(ToolUseBlock("s", "Read", {"file_path": "s"}), ToolUseBlock("b", "Read", {"file_path": "b"})),
        Message("user", (small, ToolResultBlock("b", "b" * 5000))),
        A("done"),
    ]
    out = apply_tool_result_budget(history, opts())
    assert out[0] is history[0] and out[1] is history[1] and out[3] is history[3]
    assert out[2].content[0] is small  # the loop tells Read "seen whole" by this identity
    assert whole_result_ids(history, out) == {"s"}


# ---- ①'s note: how to get the rest ----


async def test_read_note_gives_the_offset_to_continue_from(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("".join(f"line number {n} of the file\n" for n in range(1, 401)))
    output = await ReadTool().call(ReadArgs("big.py"), ToolContext(cwd=tmp_path))
    use = ToolUseBlock("r1", "Read", {"file_path": "big.py"})
    history = [U("read"), A(use), Message("user", (ToolResultBlock("r1", output.content, details=output.details),))]
    content = first_result(apply_tool_result_budget(history, opts(max_tool_result_chars=1000))[2]).content
    shown, note = content.split(TRUNCATION_NOTE)
    *whole, partial = shown.split("\n")
    last_whole = int(whole[-1].split("\t")[0])
    assert whole[-1] == f"{last_whole}\tline number {last_whole} of the file"
    assert partial != f"{last_whole + 1}\tline number {last_whole + 1} of the file"  # cut mid-line
    assert note.endswith(f" To see the rest, Read big.py with offset={last_whole + 1}.]")


def test_notes_for_other_tools() -> None:
    bash = ToolUseBlock("b", "Bash", {"command": "pytest"})
    grep = ToolUseBlock("g", "Grep", {"pattern": "x"})
    assert "output filtered (grep, head, tail)" in truncation_note("out", 10, bash)
    assert truncation_note("out", 10, grep).endswith("call Grep again with narrower arguments.]")
    assert truncation_note("out", 10, None) == f"{TRUNCATION_NOTE} to its first 10 characters.]"
    # A Read whose data shows no lines (an error, a stub) gets no offset; the offset comes from the data.
    read = ToolUseBlock("r", "Read", {"file_path": "a"})
    assert "offset" not in truncation_note("File does not exist", 10, read)
    assert "offset" not in truncation_note("File unchanged", 10, read, ReadResult(7, notice="unchanged"))
    assert truncation_note("7\tabc", 10, read, ReadResult(7, 1, 9)).endswith("Read a with offset=7.]")  # 7 was cut
    assert "offset" not in truncation_note("7\tabc", 10, read)  # numbered text without data: no numbers are read
    assert truncation_note("7\tabc\n8\tde", 10, read, ReadResult(7, 2, 9)).endswith("offset=8.]")
    assert "offset" not in truncation_note("7\tabc\n\n[File has", 10, read, ReadResult(7, 1, 9))  # past the lines
    assert "offset" not in truncation_note("7", 10, read, ReadResult(7, 1, 9))  # not even its number shown


# ---- ③ retain (C6-C10, C12) ----


def test_c6_retain_keeps_at_most_max_messages_and_the_last_one() -> None:
    history = conv(10)
    out = compact_messages(history, opts(max_messages=12, threshold_chars=0))
    assert len(out) <= 12
    assert out[-1] is history[-1]


def test_c7_retain_starts_at_user_text_and_never_orphans_a_result() -> None:
    out = compact_messages(conv(10), opts(max_messages=10, threshold_chars=0))
    assert out[0].is_user_text
    assert every_result_has_its_call(out)


def test_c8_short_history_is_returned_as_is() -> None:
    history = conv(2)
    assert compact_messages(history, opts(max_messages=40)) is history


def test_c9_budget_and_retain_together() -> None:
    history = [*conv(8), U("再来"), *tool_turn("toolu_w", "w" * 9000)]
    out = compact_messages(history, opts(max_messages=8, max_tool_result_chars=500, threshold_chars=0))
    assert len(out) <= 8
    last = first_result(out[-1]).content
    assert TRUNCATION_NOTE in last and len(last) < 1000


def test_c10_under_the_threshold_nothing_is_dropped() -> None:
    history = conv(10)
    assert compact_messages(history, opts(max_messages=12, threshold_chars=1_000_000)) is history


def test_c12_threshold_from_the_environment() -> None:
    options = CompactOptions.from_env({**SEED, "COMPACT_THRESHOLD_CHARS": "50"}, max_messages=12)
    assert options.threshold_chars == 50
    assert len(compact_messages(conv(10), options)) <= 12


def test_retain_moves_the_cut_forward_to_user_text() -> None:
    history = [U("first"), *tool_turn("a", "x" * 50), *tool_turn("b", "y" * 50), U("second"), A("ok")]
    # len - max = 1 lands on an assistant tool_use; the next user text message is index 5.
    out = apply_retain_tail_if_needed(history, opts(max_messages=6, threshold_chars=0))
    assert out == history[5:]
    assert out[0] is history[5]


def test_retain_without_a_user_text_message_after_the_cut_is_unchanged() -> None:
    history = [U("only"), *tool_turn("a", "x" * 50), *tool_turn("b", "y" * 50), *tool_turn("c", "z" * 50)]
    assert apply_retain_tail_if_needed(history, opts(max_messages=3, threshold_chars=0)) is history


def test_retain_needs_both_over_threshold_and_too_many_messages() -> None:
    history = conv(10)  # 40 messages
    size = estimate_outbound_chars(history)
    assert apply_retain_tail_if_needed(history, opts(max_messages=12, threshold_chars=size)) is history  # equal
    assert len(apply_retain_tail_if_needed(history, opts(max_messages=12, threshold_chars=size - 1))) <= 12
    assert apply_retain_tail_if_needed(history, opts(max_messages=40, threshold_chars=0)) is history


def test_meta_user_text_counts_as_a_boundary() -> None:
    history = [U("q"), *tool_turn("a", "x"), user_text("injected", meta=True), A("ok"), U("next"), A("ok")]
    out = apply_retain_tail_if_needed(history, opts(max_messages=4, threshold_chars=0))
    assert out[0] is history[3]


# ---- switches and options (C13, C14, C19) ----


def test_c13_disabled_by_option_returns_the_same_list() -> None:
    history = [*conv(3), *tool_turn("t", "x" * 9000)]
    options = opts(enabled=False, max_tool_result_chars=100, max_messages=1, threshold_chars=0)
    assert compact_messages(history, options) is history
    for stage in (apply_tool_result_budget, microcompact_messages, apply_retain_tail_if_needed):
        assert stage(history, options) is history


def test_c14_compact_0_in_the_environment_turns_everything_off() -> None:
    history = [*conv(3), *tool_turn("t", "x" * 9000)]
    options = CompactOptions.from_env({**SEED, "COMPACT": "0"}, max_tool_result_chars=100, max_messages=1)
    assert options.enabled is False
    assert compact_messages(history, options) is history


def test_c19_compact_0_with_micro_options() -> None:
    history = long_history()
    options = CompactOptions.from_env(
        {**SEED, "COMPACT": "0"}, threshold_chars=0, micro_keep_recent=0, micro_min_chars=1
    )
    assert compact_messages(history, options) is history


@pytest.mark.parametrize(
    ("env", "threshold"),
    [({}, 80_000), ({"COMPACT_THRESHOLD_CHARS": "123"}, 123), ({"COMPACT_THRESHOLD_CHARS": "0"}, 0)]
    + [({"COMPACT_THRESHOLD_CHARS": bad}, 80_000) for bad in ("", "80k", "-5", " 50", "1e3", "٣")],
)
def test_threshold_env_must_be_all_digits(env: dict[str, str], threshold: int) -> None:
    assert CompactOptions.from_env({**SEED, **env}).threshold_chars == threshold


def test_options_override_the_environment() -> None:
    env = {**SEED, "COMPACT": "0", "COMPACT_THRESHOLD_CHARS": "50", "COMPACT_LOW_WATER_PERCENT": "40"}
    options = CompactOptions.from_env(env, enabled=True, threshold_chars=7, low_water_percent=None)
    assert (options.enabled, options.threshold_chars, options.low_water_percent) == (True, 7, 40)
    assert CompactOptions.from_env({"COMPACT": "false"}).enabled is True  # only "0" turns it off
    assert CompactOptions.from_env(SEED) == CompactOptions.v4()  # the seed's defaults
    assert CompactOptions.from_env({}) == CompactOptions()  # the default profile's
    with pytest.raises(TypeError):
        CompactOptions.from_env({}, no_such_option=1)


def test_from_env_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMPACT_THRESHOLD_CHARS", "999")
    monkeypatch.setenv("COMPACT", "0")
    options = CompactOptions.from_env()
    assert (options.threshold_chars, options.enabled) == (999, False)


# ---- ② microcompact (C17-C23) ----


def test_c17_old_results_become_placeholders_and_recent_ones_stay() -> None:
    options = opts(
        threshold_chars=0, micro_keep_recent=2, micro_min_chars=100, max_tool_result_chars=50_000, max_messages=100
    )
    out = compact_messages(long_history(), options)
    found = results(out)
    assert len(found) == 6
    assert MICROCOMPACT_NOTE in found[0].content and "f0.txt" in found[0].content and len(found[0].content) < 200
    assert found[0].content == "[Old tool result content cleared] tool=Read f0.txt"
    assert found[5].content.startswith("BODY5:") and MICROCOMPACT_NOTE not in found[5].content
    assert [MICROCOMPACT_NOTE in r.content for r in found] == [True, True, True, True, False, False]


def test_c18_keep_recent_one_never_orphans_a_result() -> None:
    options = opts(threshold_chars=0, micro_keep_recent=1, micro_min_chars=100, max_messages=100)
    out = compact_messages(long_history(), options)
    assert every_result_has_its_call(out)
    assert [MICROCOMPACT_NOTE in r.content for r in results(out)] == [True] * 5 + [False]


def test_c20_micro_then_retain_and_the_history_is_untouched() -> None:
    history = long_history()
    original = history[2]
    out = compact_messages(history, opts(threshold_chars=0, micro_keep_recent=2, micro_min_chars=100, max_messages=8))
    assert len(out) <= 8
    assert history[2] is original and first_result(original).content.startswith("BODY0:")


def test_c21_trace_shows_micro(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRACE", "1")
    compact_messages(long_history(), opts(threshold_chars=0, micro_keep_recent=2, micro_min_chars=100))
    lines = trace_lines(capsys)
    assert any(line.startswith("[trace] compact.micro replaced=") for line in lines)
    assert any("compact.run" in line and "strategy=micro" in line for line in lines)


def test_c22_non_compactable_results_stay() -> None:
    history = [
        U("q"),
        *tool_turn("e1", "E" * 800, name="Echo", message="hi"),
        *tool_turn("r1", "R" * 800, file_path="r.txt"),
        U("again"),
    ]
    found = results(microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=0)))
    assert found[0].content == "E" * 800
    assert found[1].content == "[Old tool result content cleared] tool=Read r.txt"


def test_c23_retain_is_skipped_when_micro_was_enough(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TRACE", "1")
    history = long_history()
    options = opts(threshold_chars=2000, micro_keep_recent=1, max_messages=8)
    assert estimate_outbound_chars(history) > 2000
    out = compact_messages(history, options)
    assert len(out) == 24
    assert MICROCOMPACT_NOTE in results(out)[0].content
    assert estimate_outbound_chars(out) <= 2000
    lines = trace_lines(capsys)
    assert any("stage=micro" in line for line in lines)
    assert not any("stage=retain" in line for line in lines)


@pytest.mark.parametrize("name", ["Read", "Write", "Edit", "Bash", "Grep", "Glob", "mcp__files__read", "mcp__x"])
def test_compactable_tools_are_cleared(name: str) -> None:
    history = [U("q"), *tool_turn("old", "o" * 600, name=name, file_path="p"), *tool_turn("new", "n", name=name)]
    assert results(microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=1)))[0].content == (
        f"[Old tool result content cleared] tool={name} p"
    )


def test_clearing_an_image_result_drops_its_images_and_they_count_toward_the_estimate() -> None:
    image = ImageData("image/png", "iVBORw0KGgo=")
    old = Message("user", (ToolResultBlock("old", "[image: image/png, 8 bytes]", images=(image,)),))
    history = [U("q"), A(ToolUseBlock("old", "mcp__shots__take", {})), old, *tool_turn("new", "n", name="mcp__x")]
    assert estimate_outbound_chars(history) > 6400  # an image weighs its ~1,600 tokens, though its text is short
    cleared = results(microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=1)))[0]
    assert cleared.content == "[Old tool result content cleared] tool=mcp__shots__take" and cleared.images == ()


@pytest.mark.parametrize("name", ["Echo", "Skill", "Agent", "mcp_single", "MCP__x", "Reader", "read", "bash"])
def test_other_tools_are_kept(name: str) -> None:
    history = [U("q"), *tool_turn("old", "o" * 600, name=name, file_path="p"), *tool_turn("new", "n", name=name)]
    out = microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=1))
    assert out is history


@pytest.mark.parametrize(
    ("tool_input", "expected"),
    [
        ({"file_path": "src/query.ts"}, "[Old tool result content cleared] tool=Read src/query.ts"),
        ({"path": "src", "pattern": "x"}, "[Old tool result content cleared] tool=Read src"),
        ({"file_path": "a.py", "path": "b"}, "[Old tool result content cleared] tool=Read a.py"),
        ({"command": "ls"}, "[Old tool result content cleared] tool=Read"),
        ({"file_path": 5, "path": "p"}, "[Old tool result content cleared] tool=Read p"),
        ({}, "[Old tool result content cleared] tool=Read"),
    ],
)
def test_placeholder_byte_for_byte(tool_input: dict[str, Any], expected: str) -> None:
    history = [U("q"), A(ToolUseBlock("t", "Read", tool_input)), TR("t", "c" * 600), U("next")]
    assert results(microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=0)))[0].content == (
        expected
    )


def test_micro_threshold_and_min_chars_are_strict() -> None:
    history = [U("q"), *tool_turn("a", "a" * 500), *tool_turn("b", "b" * 501), U("next")]
    size = estimate_outbound_chars(history)
    at = opts(threshold_chars=size, micro_keep_recent=0)
    assert microcompact_messages(history, at) is history  # estimate == threshold: not over
    out = microcompact_messages(history, opts(threshold_chars=size - 1, micro_keep_recent=0))
    assert [r.content[:1] for r in results(out)] == ["a", "["]  # 500 is not > 500; 501 is


@pytest.mark.parametrize("keep", [0, 1, 2, 3, 6, 10])
def test_keep_recent_window(keep: int) -> None:
    out = microcompact_messages(long_history(), opts(threshold_chars=0, micro_keep_recent=keep))
    cleared = [MICROCOMPACT_NOTE in r.content for r in results(out)]
    whole = min(keep, 6)
    assert cleared == [True] * (6 - whole) + [False] * whole


def test_micro_counts_the_keep_window_over_all_results_not_just_compactable_ones() -> None:
    history = [U("q"), *tool_turn("r", "R" * 600), *tool_turn("e", "E" * 600, name="Echo", message="m"), U("x")]
    # The Echo result is the newest one: with keep_recent=1 it is the one kept, so the Read may go.
    out = microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=1))
    assert [r.content[:1] for r in results(out)] == ["[", "E"]


def test_unmatched_tool_results_are_skipped() -> None:
    history = [U("q"), TR("nobody", "z" * 900), U("next")]
    assert microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=0)) is history


def test_micro_keeps_identity_of_everything_it_leaves() -> None:
    history = long_history()
    out = microcompact_messages(history, opts(threshold_chars=0, micro_keep_recent=2))
    assert all(a is b for a, b in zip(history, out, strict=True) if not a.tool_results)
    assert whole_result_ids(history, out) == {"toolu_m4", "toolu_m5"}


def test_micro_is_stable_on_its_own_output() -> None:
    options = opts(threshold_chars=0, micro_keep_recent=2, micro_min_chars=10)  # placeholders are longer than 10
    once = microcompact_messages(long_history(), options)
    assert microcompact_messages(once, options) is once


# ---- trace lines, byte for byte ----


def test_trace_lines_byte_for_byte(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRACE", "1")
    history = [*long_history(), U("q7"), *tool_turn("big", "B" * 9000, file_path="big.txt")]  # 27 messages
    options = opts(threshold_chars=1000, micro_keep_recent=1, max_messages=10)
    budgeted = apply_tool_result_budget(history, options)
    micro = microcompact_messages(budgeted, options)
    out = apply_retain_tail_if_needed(micro, options)
    assert trace_lines(capsys) == [
        "[trace] compact.run stage=budget before=27 after=27 truncatedBlocks=1 strategy=truncate",
        "[trace] compact.micro replaced=6",
        f"[trace] compact.run stage=micro before=27 after=27 estimated={estimate_outbound_chars(budgeted)} "
        "overThreshold=true strategy=micro",
        f"[trace] compact.run stage=retain before=27 after={len(out)} droppedMessages={27 - len(out)} "
        f"estimated={estimate_outbound_chars(micro)} overThreshold=true strategy=retain",
    ]


def test_c15_budget_trace(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRACE", "1")
    compact_messages([U("q"), *tool_turn("t", "x" * 9000)], opts(max_tool_result_chars=100))
    lines = trace_lines(capsys)
    assert any("[trace]" in line and "compact.run" in line and "truncatedBlocks=1" in line for line in lines)


def test_c16_no_trace_when_nothing_changed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRACE", "1")
    compact_messages([U("hi")], opts())
    compact_messages(conv(3), opts(threshold_chars=0))  # over the threshold, but nothing to clear or drop
    assert trace_lines(capsys) == []


def test_no_trace_lines_without_trace(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("TRACE", raising=False)
    compact_messages(long_history(), opts(threshold_chars=0, max_tool_result_chars=10, max_messages=4))
    assert capsys.readouterr().err == ""


# ---- the seed's estimate ----


def test_estimate_counts_like_javascript() -> None:
    use = ToolUseBlock("id-not-counted", "Read", {"file_path": "a.txt", "limit": 5.0, "n": [1, 2.5]})
    history = [U("héllo😀"), A(use), TR("id-not-counted", "中文"), A("ok")]
    # "héllo😀" is 7 UTF-16 units; Read 4; JSON.stringify(input) = {"file_path":"a.txt","limit":5,"n":[1,2.5]}
    assert utf16_len("héllo😀") == 7
    assert json_chars(use.input) == len('{"file_path":"a.txt","limit":5,"n":[1,2.5]}')
    assert estimate_outbound_chars(history) == 7 + 4 + json_chars(use.input) + 2 + 2


@pytest.mark.parametrize(
    ("value", "js"),
    [
        ({"a": 1e21}, '{"a":1e+21}'),
        ({"a": 1e-7}, '{"a":1e-7}'),
        ({"a": 0.00001}, '{"a":0.00001}'),
        ({"a": -0.0}, '{"a":0}'),
        ({"a": float("nan")}, '{"a":null}'),
        ({"a": [True, None, "x\n\u2028"]}, '{"a":[true,null,"x\\n\u2028"]}'),
    ],
)
def test_json_length_matches_json_stringify(value: Any, js: str) -> None:
    assert json_chars(value) == len(js)


def test_json_length_is_zero_when_not_serialisable() -> None:
    assert json_chars({"x": object()}) == 0


def test_utf16_prefix_never_splits_a_pair() -> None:
    assert utf16_prefix("ab😀c", 3) == "ab"
    assert utf16_prefix("ab😀c", 4) == "ab😀"
    assert utf16_prefix("abc", 0) == ""


# ---- orchestration ----


def test_compact_messages_refuses_an_async_microcompact() -> None:
    async def async_micro(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
        return messages

    with pytest.raises(TypeError, match="synchronously"):
        compact_messages([U("q")], opts(), microcompact=async_micro)  # type: ignore[arg-type]


def test_compact_messages_uses_the_injected_microcompact() -> None:
    seen: list[int] = []

    def spy(messages: Sequence[Message], options: CompactOptions) -> Sequence[Message]:
        seen.append(len(messages))
        return messages

    history = long_history()
    out = compact_messages(history, opts(threshold_chars=10**9), microcompact=spy)
    assert seen == [24] and out is history


async def test_c24_the_loop_sends_the_compacted_copy_and_keeps_the_history(tmp_path: Path) -> None:
    history = [
        U("读"),
        A(ToolUseBlock("toolu_q", "Read", {"file_path": "a.txt"})),
        TR("toolu_q", "z" * 9000),
        U("继续"),
    ]
    model = ScriptedModel([reply("好")])
    params = QueryParams(
        messages=history,
        tools=ToolRegistry([EchoTool()]),
        context=ToolContext(cwd=tmp_path),
        compact=CompactOptions.v4(max_tool_result_chars=1000),
    )
    events = [e async for e in query(params, QueryDeps(call_model=model))]
    assert isinstance(events[-1], Terminal) and events[-1].reason == "completed"
    assert len(model.requests) == 1
    sent = first_result(model.requests[0].messages[2]).content
    assert len(sent) < 2000 and TRUNCATION_NOTE in sent
    assert first_result(history[2]).content == "z" * 9000


def test_a_placeholder_longer_than_the_budget_is_left_alone() -> None:
    """Found by hypothesis on a clean clone: with a tiny budget, ① cut ②'s placeholder on a later call (when ②
    no longer re-placed it), so the pipeline was not idempotent and the path hint was lost."""
    from react_agent_mini.compact.pipeline import CompactOptions, apply_tool_result_budget

    placeholder = "[Old tool result content cleared] tool=Read src/app.py"
    history = [
        user_text("go"),
        Message("assistant", (ToolUseBlock("t0", "Read", {"file_path": "src/app.py"}),)),
        Message("user", (ToolResultBlock("t0", placeholder),)),
    ]
    options = CompactOptions.v4(max_tool_result_chars=40)
    assert apply_tool_result_budget(history, options) is history
