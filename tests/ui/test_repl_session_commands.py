"""`!command`, `/model`, `/export` and `/context` in the REPL on a real pty, against the loopback fake model."""

from __future__ import annotations

from pathlib import Path

from react_agent_mini import transcript

from ..fakes.fake_llm import FakeLLMServer, Reply
from .test_repl_pty import ram_term, sent


def test_a_bang_command_runs_without_a_question_and_joins_the_conversation(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    (tmp_path / "notes.txt").write_text("alpha\n")
    fake_llm.enqueue(Reply(text="I see alpha."))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("!cat notes.txt; echo oops >&2; touch made.txt; exit 3")
        shown = term.expect("(exit code 3)")
        assert "alpha" in shown and "oops" in shown and "Allow?" not in shown
        term.prompt()
        assert not fake_llm.requests  # nothing was sent for the command itself
        term.line("what did it print?")
        term.expect("I see alpha.")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert (tmp_path / "made.txt").exists()
    assert sent(fake_llm) == [
        {"role": "user", "content": "<bash-input>cat notes.txt; echo oops >&2; touch made.txt; exit 3</bash-input>"},
        {"role": "user", "content": "<bash-stdout>alpha</bash-stdout><bash-stderr>oops</bash-stderr>"},
        {"role": "user", "content": "what did it print?"},
    ]
    saved = transcript.list_sessions(tmp_path)[0]
    texts = [m.text for m in transcript.load(saved.path).messages]
    assert texts[0].startswith("<bash-input>cat notes.txt") and texts[1].startswith("<bash-stdout>alpha")
