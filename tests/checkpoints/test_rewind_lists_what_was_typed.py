"""A custom command's turn is listed by `/rewind` and `ram rewind` as the user typed it (`/review src/app.py`), not
as the body it expanded to — which is still what the model gets, and what a resumed session sends again."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_cli import assert_no_traceback, env_for, ram
from ..ui.test_repl_pty import ram_term, sent

BODY = "Review $ARGUMENTS with care: look for bugs first, then for names that say too little.\n"
EXPANDED = "Review src/app.py with care: look for bugs first, then for names that say too little."


def project(tmp_path: Path) -> None:
    (tmp_path / ".claude" / "commands").mkdir(parents=True)
    (tmp_path / ".claude" / "commands" / "review.md").write_text(BODY)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x = 1\n")


def test_ram_rewind_lists_a_headless_custom_command_as_typed(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    project(tmp_path)
    env = env_for("openai", fake_llm, ALLOW_WRITE="1")
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Write", {"file_path": "REVIEW.md", "content": "fine\n"})]),
        Reply(text="Reviewed."),
    )
    proc = ram("/review src/app.py", env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert [m["content"] for m in fake_llm.requests[0].body["messages"] if m["role"] == "user"] == [EXPANDED]
    listed = ram("rewind", env=env, cwd=tmp_path)
    assert_no_traceback(listed)
    line = listed.stdout.splitlines()[1]
    assert line.startswith("   1. /review src/app.py ") and line.endswith("REVIEW.md"), line
    assert "with care" not in listed.stdout

    fake_llm.enqueue(Reply(text="Still reviewed."))
    again = ram("-c", "and?", env=env, cwd=tmp_path)  # resumed from the transcript: the model gets the body again
    assert again.returncode == 0, again.stderr
    users = [m["content"] for m in fake_llm.requests[-1].body["messages"] if m["role"] == "user"]
    assert users == [EXPANDED, "and?"]


def test_the_repls_rewind_lists_a_custom_command_as_typed(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    project(tmp_path)
    fake_llm.enqueue(Reply(text="Reviewed."), Reply(text="Back."))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("/review src/app.py")
        term.expect("Reviewed.")
        term.prompt()
        term.line("/rewind")
        listing = term.expect("Rewind to right after which turn?")
        assert " 1. /review src/app.py " in listing and "with care" not in listing
        term.line("0")
        term.expect("[b/c/n, Enter to cancel]")
        term.line("n")
        term.expect("conversation back to the start")
        term.prompt()
        term.line("hello")
        term.expect("Back.")
        term.send("\x04")
        assert term.wait() == 0
    assert [m["content"] for m in sent(fake_llm, 0) if m["role"] == "user"] == [EXPANDED]
    assert [m["content"] for m in sent(fake_llm) if m["role"] == "user"] == ["hello"]
