"""What a Bash call printed, in the REPL: the last lines under its tool line, dimmed, and `/output` for all of it.

`ram` runs in a real pseudo-terminal against the loopback fake LLM server; the screen is read through a VT100
emulator (`Term.screen`), so what is asserted is what the user sees.
"""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from .test_repl_pty import ram_term

BYPASS = ("--permission-mode", "bypassPermissions")


def lines_of(screen: str) -> list[str]:
    return [line.strip() for line in screen.splitlines()]


def test_the_last_lines_of_a_command_show_under_it_and_slash_output_shows_all(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": "seq 1 200"})]),
        Reply(text="counted"),
        Reply(tool_calls=[ToolCall("Bash", {"command": "echo second"})]),
        Reply(text="echoed"),
    )
    with ram_term(fake_llm, tmp_path, *BYPASS) as term:
        term.prompt()
        term.line("count")
        term.expect("counted")
        term.expect("out tokens")
        shown = lines_of(term.screen())
        at = shown.index("● Bash seq 1 200")
        assert shown[at + 1 : at + 7] == ["⎿ … +195 lines (/output shows them all)", "196", "197", "198", "199", "200"]
        assert "195" not in shown and "1" not in shown
        term.prompt()
        term.line("/output")
        term.expect("$ seq 1 200")
        term.expect("200")
        term.prompt()
        screen = lines_of(term.screen())
        start = screen.index("$ seq 1 200")
        assert screen[start + 1 : start + 201] == [str(n) for n in range(1, 201)]  # every line, in order
        term.line("again")
        term.expect("echoed")
        term.prompt()
        term.line("/output")
        assert "second" in term.expect("$ echo second")  # the last command is the default
        term.line("/output 2")
        term.expect("$ seq 1 200")
        term.line("/output 3")
        term.expect("only 2 Bash commands have run in this conversation")
        term.line("/output x")
        term.expect("usage: /output [N]")
        term.send("\x04")
        assert term.wait() == 0
    assert "Traceback" not in term.text


def test_a_failing_command_shows_its_error_output_with_control_characters_visible(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    script = "printf 'collected 2 items\\n'; printf 'FAILED test_x.py::test_add - assert 3 == 4 \\033[2J\\n'; " + (
        "echo 'boom: it broke' >&2; exit 1"
    )
    fake_llm.enqueue(
        Reply(tool_calls=[ToolCall("Bash", {"command": script})]),
        Reply(text="it failed"),
    )
    with ram_term(fake_llm, tmp_path, *BYPASS) as term:
        term.prompt()
        term.line("/output")
        term.expect("no Bash command has run in this conversation yet")
        term.line("run the tests")
        term.expect("it failed")
        term.expect("out tokens")
        shown = lines_of(term.screen())
        at = next(i for i, line in enumerate(shown) if line.startswith("✗ Bash printf"))
        assert shown[at + 1 : at + 6] == [
            "⎿ collected 2 items",
            "FAILED test_x.py::test_add - assert 3 == 4 ^[[2J",  # the escape is shown, not obeyed
            "stderr:",
            "boom: it broke",
            "Exit code 1",
        ]
        term.send("\x04")
        assert term.wait() == 0
    assert "\x1b[2J" not in term.raw.decode(errors="replace")
