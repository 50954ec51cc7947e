"""Stage ① keeps the head and the tail of a long Bash result, so the end of a command (a test run's summary, the
error, the exit status) reaches the model: end to end through the CLI and the loopback fake server, the exact
counts in the line that says how much of the middle was cut, its properties (within the cap, idempotent, head
and tail exact parts of the original), and which tools keep only their head."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_agent_mini.compact.budget import MIDDLE_CUT, TRUNCATION_NOTE
from react_agent_mini.compact.estimate import utf16_len
from react_agent_mini.compact.pipeline import CompactOptions, apply_tool_result_budget
from react_agent_mini.messages import Message, ToolResultBlock, ToolUseBlock, message_to_dict, user_text
from react_agent_mini.read_result import ReadResult
from react_agent_mini.tools.base import ToolContext
from react_agent_mini.tools.builtin.bash import BashArgs, BashTool
from react_agent_mini.transcript import load

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram

CUT_LINE = re.compile(r"\[… ([\d,]+) characters(?: \(([\d,]+) lines\))? " + re.escape(MIDDLE_CUT) + r";[^\n]*…\]\n")


def split(content: str) -> tuple[str, int, int | None, str]:
    """(head, characters cut, lines cut or None, tail) of a head+tail result."""
    match = CUT_LINE.search(content)
    assert match is not None, content[:300]
    head = content[: match.start()]
    lines = match.group(2)
    return (
        head,
        int(match.group(1).replace(",", "")),
        None if lines is None else int(lines.replace(",", "")),
        content[match.end() :],
    )


def the_head(head: str, original: str) -> str:
    """The head as it was in the original (a separating newline goes when the head was cut mid-line)."""
    return head if original.startswith(head) else head.removesuffix("\n")


def middle_of(original: str, head: str, tail: str) -> str:
    return original[len(head) : len(original) - len(tail)]


def history_with(name: str, content: str, **tool_input: Any) -> list[Message]:
    use = ToolUseBlock("t1", name, tool_input or {"command": "make test"})
    return [user_text("go"), Message("assistant", (use,)), Message("user", (ToolResultBlock("t1", content),))]


def recorded_before_data(tmp_path: Path, messages: list[Message]) -> list[Message]:
    """`messages` written as a transcript was before results carried data, and loaded back (`transcript.load`)."""
    path = tmp_path / "old.jsonl"
    records: list[dict[str, Any]] = [{"type": "meta", "session_id": "old"}]
    records += [{"type": "message", "message": message_to_dict(m)} for m in messages]  # no details
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return load(path).messages


def cut(messages: list[Message], limit: int = 4000) -> str:
    out = apply_tool_result_budget(messages, CompactOptions.v4(max_tool_result_chars=limit))
    return out[-1].tool_results[0].content


SEQ = "".join(f"{n}\n" for n in range(1, 300_001)).rstrip("\n")
"""What `seq 1 300000` prints, as the Bash tool lays it out (trailing newline dropped)."""


# ---- end to end: the CLI, a real Bash, the fake server ----


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_end_of_a_long_command_reaches_the_model(wire: str, fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "seq 1 300000"})]), Reply(text="It counts."))
    env = env_for(wire, fake_llm, COMPACT_PROFILE="seed")  # the seed's 4000-character cap (v2: test_context_v2.py)
    proc = ram("count to 300000", env=env, cwd=tmp_path)  # seq is read-only: no permission
    assert_no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    last = fake_llm.requests[1].body["messages"][-1]
    content = last["content"] if wire == "openai" else last["content"][0]["content"]
    assert isinstance(content, str) and utf16_len(content) <= 4000
    assert content.endswith("\n299999\n300000")  # the end reaches the model
    head, chars, lines, tail = split(content)
    head = the_head(head, SEQ)
    assert SEQ.startswith(head) and SEQ.endswith(tail) and head.startswith("1\n2\n3\n")
    # The line counts what the model does not see: what compaction cut and what Bash itself had left out.
    middle = middle_of(SEQ, head, tail)
    assert (chars, lines) == (len(middle), middle.count("\n"))
    assert lines is not None and lines > 295_000
    assert f"[… {chars:,} characters ({lines:,} lines) cut from the middle" in content


async def test_bash_says_how_many_lines_it_left_out(tmp_path: Path) -> None:
    out = await BashTool().call(BashArgs("seq 1 100000"), ToolContext(cwd=tmp_path))
    original = "".join(f"{n}\n" for n in range(1, 100_001))
    match = re.search(r"\n\[\.\.\. (\d+) characters \((\d+) lines\) omitted \.\.\.\]\n", out.content)
    assert match is not None
    head, tail = out.content[: match.start()], out.content[match.end() :]
    omitted = middle_of(original.rstrip("\n"), head, tail)
    assert (int(match.group(1)), int(match.group(2))) == (len(omitted), omitted.count("\n"))


# ---- the cut itself ----


def test_bash_keeps_head_and_tail_at_line_boundaries_within_the_cap() -> None:
    output = (
        "".join(f"line {n}: {'x' * (n % 50)}\n" for n in range(5000)) + "FAILED tests/test_x.py::test_y\nExit code 1"
    )
    content = cut(history_with("Bash", output))
    assert utf16_len(content) <= 4000
    assert content.endswith("FAILED tests/test_x.py::test_y\nExit code 1")
    head, chars, lines, tail = split(content)
    assert head.endswith("\n") and output.startswith(head)  # whole lines only
    assert output.endswith(tail) and output[len(output) - len(tail) - 1] == "\n"
    middle = middle_of(output, head, tail)
    assert (chars, lines) == (len(middle), middle.count("\n"))
    # 40% of the room for the head, 60% for the tail (each cut back to a line boundary).
    assert 0.3 < len(head) / (len(head) + len(tail)) < 0.45


def test_an_old_bash_marker_without_a_line_count_gives_characters_only(tmp_path: Path) -> None:
    output = "a\n" * 8000 + "\n[... 123456 characters omitted ...]\n" + "z\n" * 8000
    head, chars, lines, tail = split(cut(recorded_before_data(tmp_path, history_with("Bash", output))))
    assert lines is None
    assert chars == len(middle_of(output, head, tail)) - len("\n[... 123456 characters omitted ...]\n") + 123456
    # The same text in a result of this session without data (a hook's text): output like any other.
    head, chars, lines, tail = split(cut(history_with("Bash", output)))
    middle = middle_of(output, head, tail)
    assert (chars, lines) == (len(middle), middle.count("\n"))


def test_a_long_single_line_is_cut_mid_line() -> None:
    output = "y" * 50_000
    content = cut(history_with("Bash", output))
    head, chars, lines, tail = split(content)
    assert head.endswith("y\n") and set(tail) == {"y"} and lines == 0
    assert len(head) - 1 + chars + len(tail) == 50_000


def test_the_tool_name_comes_from_the_call_each_result_answers() -> None:
    text = "".join(f"{n}\tline {n} of the file\n" for n in range(1, 3000))
    calls = (ToolUseBlock("r", "Read", {"file_path": "big.py"}), ToolUseBlock("b", "Bash", {"command": "cat big.py"}))
    history = [
        user_text("go"),
        Message("assistant", calls),
        Message(
            "user", (ToolResultBlock("r", text, details=ReadResult(1, 2999, 2999)), ToolResultBlock("b", text, True))
        ),
    ]
    read, bash = apply_tool_result_budget(history, CompactOptions.v4())[-1].tool_results
    assert TRUNCATION_NOTE in read.content and read.content.startswith(text[:3000])
    last_whole = read.content.split(TRUNCATION_NOTE)[0].split("\n")[-2].split("\t")[0]
    assert read.content.endswith(f"Read big.py with offset={int(last_whole) + 1}.]")  # Read: where to go on
    assert MIDDLE_CUT in bash.content and bash.content.endswith("2999\tline 2999 of the file\n")
    assert (bash.tool_use_id, bash.is_error) == ("b", True)


def test_only_bash_keeps_head_and_tail_the_others_their_head() -> None:
    """Read, Grep and Glob page from the start; an MCP tool's output has no known shape; Echo and Skill are
    short: for them the head is what the next call continues from."""
    output = "".join(f"src/module_{n}.py:{n}: match\n" for n in range(2000))
    for name in ("Read", "Grep", "Glob", "mcp__docs__fetch", "Echo"):
        content = cut(history_with(name, output, path="src"))
        assert MIDDLE_CUT not in content
        kept, note = content.split(TRUNCATION_NOTE)
        assert kept == output[:4000] and note.startswith(" to its first 4000 characters.")
    assert MIDDLE_CUT in cut(history_with("Bash", output))
    # A cap too small for a head, the line and a tail: Bash keeps its head too, with a note on how to see more.
    small = cut(history_with("Bash", "x" * 1000), limit=200)
    assert MIDDLE_CUT not in small and small.startswith("x" * 200) and "output filtered" in small


# ---- properties ----

UNITS = ["x", "ab c ", "中文", "😀", "def f(x):\n", "\n", "   ", "é", '{"k": [1, 2]}', "Exit code 1"]


@st.composite
def bash_outputs(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.builds(lambda u, n: u * n, st.sampled_from(UNITS), st.integers(1, 400)), max_size=60))
    text = "".join(parts)
    if draw(st.booleans()):  # Bash's own marker in the middle, with or without a line count
        cut_chars, cut_lines = draw(st.integers(1, 10**7)), draw(st.integers(0, 10**6))
        lines = f" ({cut_lines} lines)" if draw(st.booleans()) else ""
        middle = len(text) // 2
        text = f"{text[:middle]}\n[... {cut_chars} characters{lines} omitted ...]\n{text[middle:]}"
    return text


@settings(max_examples=200, deadline=None)
@given(bash_outputs(), st.sampled_from([500, 1000, 4000, 8000]))
def test_head_and_tail_properties(output: str, limit: int) -> None:
    history = history_with("Bash", output)
    options = CompactOptions.v4(max_tool_result_chars=limit)
    out = apply_tool_result_budget(history, options)
    assert apply_tool_result_budget(out, options) is out  # idempotent
    content = out[-1].tool_results[0].content
    if utf16_len(output) <= limit:
        assert out is history
        return
    assert utf16_len(content) <= limit  # within the cap, the line included
    head, chars, lines, tail = split(content)
    head = the_head(head, output)
    assert output.startswith(head) and output.endswith(tail) and head and tail  # exact prefix and suffix
    middle = middle_of(output, head, tail)
    if "omitted ...]" not in middle:
        assert (chars, lines) == (len(middle), middle.count("\n"))
    assert out[:2] == history[:2] and out[0] is history[0] and out[1] is history[1]
