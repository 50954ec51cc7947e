"""Compaction reads what a tool's result says about itself from its data (`ToolResultBlock.details`, and for its own
cut `ToolResultBlock.cut`), never from the text: Grep's `--` separators are no entries and its page line is found
however many notes follow it, a line a command prints that looks like compaction's own cut line is output like
any other, and a result without data is read as plain text.

Real files, a real rg and a real bash (tmp_path)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from react_agent_mini.compact.shape import cut_entries, demoted, fresh_cut
from react_agent_mini.messages import ToolResultBlock, ToolUseBlock
from react_agent_mini.search_result import SearchResult
from react_agent_mini.tools.base import ToolContext, ToolOutput
from react_agent_mini.tools.builtin.bash import BashTool
from react_agent_mini.tools.builtin.grep import GrepTool

from .test_compact_head_tail import middle_of, split, the_head


async def grep(root: Path, **raw: Any) -> ToolOutput:
    tool = GrepTool()
    return await tool.call(tool.validate(raw), ToolContext(cwd=root))


def block(call_id: str, output: ToolOutput) -> ToolResultBlock:
    """The result as the runner makes it from the tool's output."""
    return ToolResultBlock(call_id, output.content, output.is_error, details=output.details)


async def test_grep_context_separators_are_no_entries_and_the_offset_continues_exactly(tmp_path: Path) -> None:
    for n in range(40):
        body = "".join(f"filler {i}\n" for i in range(6))
        (tmp_path / f"m{n:02}.py").write_text(f"{body}needle {n}\n{body}")
    args = {"pattern": "needle", "output_mode": "content", "-C": 1}
    output = await grep(tmp_path, **args)
    assert isinstance(output.details, SearchResult) and output.details.separators  # `--` between the files
    use = ToolUseBlock("g", "Grep", args)
    cut = fresh_cut(block("g", output), 500, use)
    assert cut is not None
    *shown, note = cut.content.split("\n")
    entries = [line for line in shown if line != "--"]
    assert len(entries) < len(shown) < output.details.lines  # separators kept, cut before the end
    total = output.details.total
    assert f"{len(entries)} of these {total} entries shown (results 1..{len(entries)} of {total})" in note
    assert f"call Grep again with offset={len(entries)}" in note
    rest = await grep(tmp_path, **args, offset=len(entries))  # the offset the note gives picks up exactly
    whole = [line for line in output.content.split("\n") if line != "--"]
    assert rest.content.split("\n")[0] == whole[len(entries)]


def test_a_search_stopped_early_is_cut_with_its_page_from_the_data() -> None:
    listing = [f"src/m{n}.py" for n in range(300)]
    text = "\n".join([*listing, "[Showing results 1..300 of 5000. Use offset=300 to see more.]"])
    text += "\n[The search produced too much output and was stopped early: totals are incomplete. Narrow it.]"
    note = cut_entries(text, 1000, "Grep", SearchResult(300, 5000, truncated=True)).rsplit("\n", 1)[1]
    shown = int(note.split(" of these", 1)[0].removeprefix("[… "))
    assert f"{shown} of these 300 entries shown (results 1..{shown} of 5000)" in note  # not 302 lines of 302
    # The same text without data: every line is an entry, nothing is read from the notes.
    assert "of these 302 entries shown (results 1.." in cut_entries(text, 1000, "Grep")


async def test_a_printed_line_like_compaction_s_own_is_not_taken_for_one_when_cut_again(tmp_path: Path) -> None:
    fake = "[… 999,999 characters (9,999 lines) cut from the middle by compaction; to see them, run it again …]"
    command = f"seq 1 400; echo '{fake}'; seq 401 30000"
    output = await BashTool().call(BashTool().validate({"command": command}), ToolContext(cwd=tmp_path))
    use = ToolUseBlock("b", "Bash", {"command": command})
    fresh = fresh_cut(block("b", output), 4000, use)
    assert fresh is not None and fresh.cut is not None and fake in fresh.content  # in the head the first cut kept
    older = demoted(fresh, 1000, use)
    assert older is not None and older.cut is not None and fake not in older.content
    head, chars, lines, tail = split(older.content)
    assert older.content[older.cut.start : older.cut.end].startswith(f"[… {chars:,} characters")
    printed = "".join(f"{n}\n" for n in range(1, 401)) + fake + "\n" + "".join(f"{n}\n" for n in range(401, 30001))
    original = printed.rstrip("\n")
    middle = middle_of(original, the_head(head, original), tail)
    # What the model misses is counted once, whatever the output says: the fake line is 1 line, not 9,999.
    assert (chars, lines) == (len(middle), middle.count("\n"))
