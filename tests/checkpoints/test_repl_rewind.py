"""`/rewind` in the REPL, in a real pseudo-terminal: list the turns, pick one, restore code and conversation, and
be asked before a file someone else changed is overwritten (kept, it holds the conversation back too)."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..ui.test_repl_pty import ram_term, sent


def test_rewind_lists_the_turns_restores_and_asks_before_overwriting(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Read", {"file_path": "calc.py"})]),
        Reply(tool_calls=[ToolCall("Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"})]),
        Reply(text="fixed"),
        Reply(
            tool_calls=[
                ToolCall("Edit", {"file_path": "calc.py", "old_string": "a + b", "new_string": "a + b + 1"}),
                ToolCall("Write", {"file_path": "perf.md", "content": "faster\n"}),
            ]
        ),
        Reply(text="faster"),
        Reply(text="after the rewind"),
    )
    with ram_term(fake_llm, tmp_path, "--permission-mode", "acceptEdits") as term:
        term.prompt()
        term.line("fix add")
        term.expect("fixed")
        term.prompt()
        term.line("make it faster")
        term.expect("out tokens")
        term.prompt()
        (tmp_path / "perf.md").write_text("my own notes\n")  # changed outside the agent
        term.line("/rewind")
        listing = term.expect("Rewind to right after which turn?")
        assert " 1. fix add" in listing and " 2. make it faster" in listing and "calc.py, perf.md" in listing
        term.line("1")
        term.expect("[b/c/n, Enter to cancel]")
        term.line("b")
        asked = term.expect("[y/N]")
        assert "perf.md: it was changed after the agent last changed it. Overwrite it" in asked
        term.line("n")
        done = term.expect("rewinds the conversation alone")
        assert "restored calc.py" in done and "left perf.md as it is" in done
        assert "conversation not rewound: the code is not all back (1 file not restored)" in done
        assert "conversation back" not in done  # not the conversation without the code it speaks of
        term.prompt()
        term.line("/rewind 1 conversation")  # what that line says to do, when the user wants it anyway
        term.expect("conversation back to right after turn 1")
        term.prompt()
        term.line("and now?")
        term.expect("after the rewind")
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (tmp_path / "perf.md").read_text() == "my own notes\n"
    users = [m["content"] for m in sent(fake_llm) if m["role"] == "user"]
    assert users == ["fix add", "and now?"]
