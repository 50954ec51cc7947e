"""A misbehaving model in the REPL, on a real pseudo-terminal: the question when it repeats a call, and the lines
that say what it did instead of a silent turn. The loopback fake server is the model, and validates every request as
the real API does, so a conversation that goes on afterwards proves the history stayed whole."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..test_model_faults import results
from .test_repl_pty import ram_term


def test_a_repeated_call_asks_whether_to_go_on_then_stops_the_turn(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    fake_llm.enqueue(
        *[Reply(tool_calls=[ToolCall("Bash", {"command": "ls"})])] * 6,
        Reply(text="Then I will read a.txt instead."),
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("what is here")
        asked = term.expect("Let it go on? [y/N]")
        assert "The model has made the same call 3 times: Bash `ls`." in asked
        assert asked.count("● Bash ls") == 2  # the third has not run
        assert len(fake_llm.requests) == 3
        term.send("y")  # one key: the calls go on, and the question comes again after three more
        term.expect("going on")
        asked = term.expect("Let it go on? [y/N]")
        assert asked.count("● Bash ls") == 3
        assert "The model has made the same call 6 times: Bash `ls`." in asked
        term.send("n")
        term.expect("stopped the turn")
        stopped = term.expect("out tokens")
        assert "error" not in stopped and "Bash ls" not in stopped
        assert len(fake_llm.requests) == 6
        term.prompt()
        term.line("something else then")
        term.expect("Then I will read a.txt instead.")
        term.send("\x04")
        assert term.wait() == 0
    assert results(fake_llm.requests[-1])[-1] == (
        "Not run: you made this exact call 6 times in a row and got the same result each time, so the user stopped "
        "the run. Do not repeat it; try something different or say what is blocking you."
    )
    assert "Traceback" not in term.text


def test_text_calls_an_empty_answer_and_a_cut_call_each_say_so(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    fake_llm.enqueue(
        Reply(text='<tool_call>\n{"name": "Read", "arguments": {"file_path": "a.txt"}}\n</tool_call>'),
        Reply(text="It says hello."),
        Reply(),
        Reply(),
        Reply(tool_calls=[ToolCall("Write", '{"file_path": "big.txt", "content": "one, two, thr')], stop="length"),
        Reply(text="I will write it in parts."),
    )
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("what does a.txt say")
        shown = term.expect("out tokens")
        assert "note: The server sent the model's tool calls as text (Hermes `<tool_call>` JSON)" in shown
        assert "--tool-call-parser hermes" in shown and "● Read a.txt" in shown and "It says hello." in shown
        term.prompt()
        term.line("and now?")
        shown = term.expect("out tokens")
        assert "retrying: the model returned an empty answer — attempt 2/2" in shown
        assert "error: the model returned an empty answer twice" in shown
        term.prompt()
        term.line("write big.txt")
        shown = term.expect("out tokens")
        assert "cut off by the output token limit (20 tokens) in the middle of a call to Write" in shown
        assert "I will write it in parts." in shown
        term.send("\x04")
        assert term.wait() == 0
    assert not (tmp_path / "big.txt").exists()
    assert results(fake_llm.requests[-1])[-1].startswith("Not run: your call to Write was cut off")
    assert "Traceback" not in term.text
