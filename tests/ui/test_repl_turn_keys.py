"""Keys of the REPL on a real pty, against the loopback fake model: Esc stops a turn, Shift+Tab cycles the
permission mode (shown in the prompt line, obeyed by the next calls)."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..processes import wait_until
from .test_repl_minimal import Term
from .test_repl_pty import ram_term, sent

SHIFT_TAB = "\x1b[Z"


def on_screen(term: Term, text: str) -> None:
    """Wait until the terminal shows `text` (prompt_toolkit redraws only what changed, so the stream alone may
    not hold it whole)."""
    assert wait_until(lambda: term.settle(0.1) is not None and text in term.screen(), timeout=30), term.screen()


def test_esc_stops_a_streaming_answer_and_keys_typed_meanwhile_reach_the_prompt(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    story = "Once upon a time " + "there was a very long story, " * 80 + "the end."
    fake_llm.enqueue(Reply(text=story, chunk_size=4, delay=0.03), Reply(text="A short one."))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("tell a story")
        term.expect("Once upon a time")
        term.send("sho")  # typed ahead while the answer streams: kept for the next prompt
        term.settle(0.2)
        term.send("\x1b")
        term.expect("Interrupted. The conversation goes on")
        term.expect("out tokens")
        term.expect("> sho")  # the keys typed during the turn are on the new prompt line
        term.line("rter please")
        term.expect("A short one.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert "the end." not in term.text
    assert "Traceback" not in term.text
    assert sent(fake_llm) == [
        {"role": "user", "content": "tell a story"},
        {"role": "user", "content": "shorter please"},
    ]


def test_esc_stops_a_running_command(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Bash", {"command": "sleep 27.1828"})]), Reply(text="Understood."))
    with ram_term(fake_llm, tmp_path, RAM_ALLOW_WRITE="1") as term:
        term.prompt()
        term.line("wait a while")
        term.expect("sleep 27.1828")
        term.settle(0.5)
        term.send("\x1b")
        term.expect("Interrupted.")
        term.prompt()
        term.line("ok")
        term.expect("Understood.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    tool_results = [m for m in sent(fake_llm) if m["role"] == "tool"]
    assert len(tool_results) == 1 and "interrupted" in str(tool_results[0]["content"]).lower()


def test_shift_tab_cycles_default_accept_edits_plan_and_the_calls_follow(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    def write(name: str) -> Reply:
        return Reply(tool_calls=[ToolCall("Write", {"file_path": name, "content": "x\n"})])

    fake_llm.enqueue(write("a.txt"), Reply(text="wrote a"), write("b.txt"), Reply(text="plan only"))
    fake_llm.enqueue(write("c.txt"))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.send(SHIFT_TAB)
        term.expect("⏵⏵ accept edits > ")
        term.line("write a")
        term.expect("wrote a")  # no question: acceptEdits lets the edit through
        term.expect("⏵⏵ accept edits > Type a task")  # the next prompt line still shows the mode
        term.send(SHIFT_TAB)
        on_screen(term, "⏸ plan mode > Type a task")
        term.line("write b")
        term.expect("plan only")
        term.expect("⏸ plan mode > Type a task")
        term.send(SHIFT_TAB)
        term.settle(1.0)
        term.line("write c")
        asked = term.expect("Allow? [y/a/N]")  # back in default mode: an edit is asked for
        assert "Write c.txt" in asked
        term.send("n")
        term.expect("you declined Write c.txt")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists() and not (tmp_path / "c.txt").exists()
    plan_result = [m for m in sent(fake_llm, 3) if m["role"] == "tool"][-1]
    assert "Plan mode is read-only" in str(plan_result["content"])
