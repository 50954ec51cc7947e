"""A Bash result carries its data (`shell_result.ShellResult`): stdout, stderr, exit code, status lines, notes and
what the capture cut, rendered for the model in one place (`ShellResult.text`) and read as fields by compaction
and the REPL — real bash subprocesses in tmp_path.

Done when: the text is the layout the Bash tool's description states, byte for byte; the data survives the
transcript (and never reaches a provider's wire); compaction counts what Bash left out from the data, so a command
that prints something looking like Bash's own cut mark is not taken for one, while a result recorded before
results carried data is still read from its text; the REPL's status lines come from the fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from react_agent_mini.compact.budget import cut_head_tail
from react_agent_mini.messages import (
    Message,
    ToolResultBlock,
    block_to_dict,
    message_from_dict,
    message_to_dict,
)
from react_agent_mini.shell_result import ShellResult, StreamCut, omissions, omitted_mark, recorded_cuts
from react_agent_mini.tools.base import ToolContext, ToolOutput
from react_agent_mini.tools.builtin.bash import OUTPUT_LIMIT, BashTool
from react_agent_mini.ui.render import bash_outcome

TOOL = BashTool()


async def run(tmp_path: Path, command: str) -> ToolOutput:
    return await TOOL.call(TOOL.validate({"command": command}), ToolContext(cwd=tmp_path))


async def test_the_result_is_data_and_its_text_is_the_documented_layout(tmp_path: Path) -> None:
    out = await run(tmp_path, "echo out; echo err >&2; exit 3")
    assert out.details == ShellResult("out\n", "err\n", 3, status=("Exit code 3",))
    assert out.content == "out\n\nstderr:\nerr\n\nExit code 3" == out.details.text()
    assert out.is_error
    quiet = await run(tmp_path, "true")
    assert isinstance(quiet.details, ShellResult) and quiet.details.silent and quiet.content == "(no output)"
    block = ToolResultBlock("t1", out.content, out.is_error, details=out.details)
    assert bash_outcome(block) == ("out\n\nstderr:\nerr", "Exit code 3")


async def test_what_the_capture_cut_is_recorded(tmp_path: Path) -> None:
    out = await run(tmp_path, "seq 1 100000")
    assert isinstance(out.details, ShellResult) and out.details.stderr_cut is None
    cut = out.details.stdout_cut
    assert cut is not None
    original = "".join(f"{n}\n" for n in range(1, 100_001))
    (mark,) = omissions(out.content, out.details)
    assert out.content[mark.start : mark.end] == omitted_mark(cut.chars, cut.lines)
    left_out = original[mark.start : len(original) - (len(out.content) - mark.end) - 1]
    assert (cut.chars, cut.lines) == (len(left_out), left_out.count("\n"))
    assert len(out.content) < 2 * OUTPUT_LIMIT


def test_the_data_is_kept_in_the_transcript_and_never_sent() -> None:
    result = ShellResult("a\n", "", 1, status=("Exit code 1",), stdout_cut=StreamCut(10, 2))
    block = ToolResultBlock("t1", result.text(), True, details=result)
    message = Message("user", (block,))
    assert "details" not in block_to_dict(block)  # the providers' wire
    assert message_from_dict(message_to_dict(message, details=True)) == message
    assert message_from_dict(message_to_dict(message)).tool_results[0].details is None  # an older transcript


@pytest.mark.parametrize("recorded", ["with data", "no data", "recorded before data"])
def test_compaction_counts_what_bash_left_out_from_the_data(recorded: str) -> None:
    printed = omitted_mark(999_999, 9_999)  # a command's own output that looks like Bash's mark
    stdout = "a\n" * 8000 + printed + "z\n" * 8000
    result = ShellResult(stdout, "", 0)
    content = result.text()
    details = {"with data": result, "no data": None, "recorded before data": recorded_cuts(content)}[recorded]
    both = cut_head_tail(content, 4000, details=details)
    assert both is not None
    count = int(both.split("[… ", 1)[1].split(" characters", 1)[0].replace(",", ""))
    if recorded == "recorded before data":  # an old session: its text, read once on load, is taken at its word
        assert count > 999_999
    else:  # the data says nothing was cut, or there is none (a hook's text): the line is output like any other
        assert count < len(content)
