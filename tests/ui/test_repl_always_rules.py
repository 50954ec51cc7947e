"""Answering `a` (always) at the REPL's permission prompt records an Edit rule in one style, Claude Code's for a
path relative to the working directory — `Edit(./mathy/ops.py)` for an Edit in a folder, `Edit(./new.txt)` for a
Write — and a rule written in the other style (`Edit(mathy/other.py)`, from settings or `--allowed-tools`) still
allows what it names."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from .test_repl_pty import ram_term


def test_always_records_edit_rules_in_one_style_and_the_other_still_works(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "mathy").mkdir()
    (tmp_path / "mathy" / "ops.py").write_text("def add(a, b):\n    return a - b\n")
    (tmp_path / "mathy" / "other.py").write_text("ZERO = 1\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "mathy/ops.py"})]),
        Reply(
            tool_calls=[ToolCall("Edit", {"file_path": "mathy/ops.py", "old_string": "a - b", "new_string": "a + b"})]
        ),
        Reply(tool_calls=[ToolCall("Write", {"file_path": "new.txt", "content": "new\n"})]),
        Reply(tool_calls=[ToolCall("Read", {"file_path": "mathy/other.py"})]),
        Reply(tool_calls=[ToolCall("Edit", {"file_path": "mathy/other.py", "old_string": "1", "new_string": "0"})]),
        Reply(text="all done"),
    )
    with ram_term(fake_llm, tmp_path, "--allowed-tools", "Edit(mathy/other.py)") as term:
        term.prompt()
        term.line("fix things")
        asked = term.expect("Allow? [y/a/N]")
        assert "Edit mathy/ops.py" in asked and "a = always allow Edit(./mathy/ops.py)" in asked
        term.send("a")
        term.expect("allowed for this session: Edit(./mathy/ops.py)")
        term.expect("Write new.txt")
        asked = term.expect("Allow? [y/a/N]")
        assert "a = always allow Edit(./new.txt)" in asked
        term.send("a")
        term.expect("allowed for this session: Edit(./new.txt)")
        done = term.expect("all done")
        assert "● Edit mathy/other.py" in done
        assert "needs permission" not in done  # the rule in the other style allowed that Edit without asking
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "mathy" / "ops.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (tmp_path / "new.txt").read_text() == "new\n"
    assert (tmp_path / "mathy" / "other.py").read_text() == "ZERO = 0\n"
    assert "Traceback" not in term.text
