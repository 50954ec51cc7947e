"""The REPL's first line, read before prompt_toolkit is up (`early/typed_line.py`, `early/repl.py`): typed at once,
it is echoed and edited in the idle prompt, and Enter sends its request before the REPL has loaded; whatever the
early reader does not handle (a control key, a command, a line the REPL loaded in the middle of) reaches
prompt_toolkit as typed. Real `ram` in a pseudo-terminal against the loopback fake model; the suite's early check
(`REACT_AGENT_MINI_EARLY_CHECK=1`) makes an early request that differs from the session's own an error. And the
line editor itself, byte by byte."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from react_agent_mini.early.typed_line import LineEcho

from ..fakes.fake_llm import FakeLLMServer, Reply
from ..test_cli import env_for
from .test_repl_minimal import Term

PLACEHOLDER = "Type a task, or /help"


def last_user_text(server: FakeLLMServer, index: int = -1) -> str:
    """The last user message of a request, in either wire format."""
    content = server.requests[index].body["messages"][-1]["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def leave(term: Term) -> None:
    """At the next prompt, Ctrl+D: the REPL exits 0."""
    term.prompt()
    term.send("\x04")
    assert term.wait() == 0


def early_term(server: FakeLLMServer, cwd: Path, wire: str = "openai", **env: str) -> Term:
    return Term(env=env_for(wire, server, TRACE="1", **env), cwd=cwd)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_first_message_goes_before_the_repl_has_loaded(fake_llm: FakeLLMServer, tmp_path: Path, wire: str) -> None:
    fake_llm.enqueue(Reply(text="Hi there."), Reply(text="Again."))
    with early_term(fake_llm, tmp_path, wire) as term:
        term.expect(PLACEHOLDER)
        term.send("hellp\x7fo there\r")  # typed at once, a typo mended with Backspace
        term.expect("Hi there.")
        term.expect("out tokens")
        text = term.text
        assert "early.sent" in text and "error" not in text.lower()
        assert text.index("early.sent") < text.index("cli.start")  # on the wire before the REPL was even set up
        assert term.screen().count("> hello there") == 1  # the line stays as typed, not drawn again
        term.prompt()
        term.send("\x1b[A")  # the message is in the history, as if typed at the prompt
        term.expect("hello there")
        term.send("\r")
        term.expect("Again.")
        leave(term)
    assert [last_user_text(fake_llm, i) for i in range(len(fake_llm.requests))] == ["hello there", "hello there"]


def test_a_line_the_repl_loads_in_the_middle_of_is_finished_in_prompt_toolkit(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Done."))
    with early_term(fake_llm, tmp_path) as term:
        term.expect(PLACEHOLDER)
        term.send("hel")
        term.expect("hel")
        term.expect("cli.start")  # the REPL is set up: prompt_toolkit has the line now
        term.settle(0.5)
        term.send("lo\r")
        term.expect("Done.")
        leave(term)
        assert "early.sent" not in term.text
    assert [last_user_text(fake_llm, i) for i in range(len(fake_llm.requests))] == ["hello"]


def test_keys_the_early_reader_does_not_handle_reach_prompt_toolkit_as_typed(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Two lines."))
    with early_term(fake_llm, tmp_path) as term:
        term.expect(PLACEHOLDER)
        term.send("/status\r")  # a command is the REPL's, typed at once or not
        term.expect("model        openai:deepseek-chat")
        leave(term)
    with early_term(fake_llm, tmp_path) as term:
        term.expect(PLACEHOLDER)
        term.send("one\x1b\rtwo\r")  # Esc Enter: a new line, prompt_toolkit's key
        term.expect("Two lines.")
        term.prompt()
        term.send("\x03")  # Ctrl+C twice at an empty prompt: leave
        term.expect("press Ctrl+C again to exit")
        term.send("\x03")
        assert term.wait() == 130
    assert [last_user_text(fake_llm, i) for i in range(len(fake_llm.requests))] == ["one\ntwo"]


def test_ctrl_c_and_ctrl_d_typed_at_once_work_as_at_the_prompt(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    with early_term(fake_llm, tmp_path) as term:
        term.expect(PLACEHOLDER)
        term.send("\x03")
        term.expect("press Ctrl+C again to exit")
        term.send("\x03")
        assert term.wait() == 130
    with early_term(fake_llm, tmp_path) as term:
        term.expect(PLACEHOLDER)
        term.send("\x04")
        assert term.wait() == 0
    assert fake_llm.requests == []


@pytest.mark.parametrize(
    ("name", "text", "asks"),
    [
        (".mcp.json", '{"mcpServers": {}}', False),
        (".claude/settings.json", '{"permissions": {"allow": ["Read"]}}', True),  # the REPL asks about it first
        (".claude/commands/review.md", "---\nallowed-tools: Bash(git:*)\n---\nReview.", True),  # and about this
    ],
)
def test_with_something_configured_nothing_is_read_or_sent_early(
    fake_llm: FakeLLMServer, tmp_path: Path, name: str, text: str, asks: bool
) -> None:
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text + "\n")
    fake_llm.enqueue(Reply(text="Hi."))
    with early_term(fake_llm, tmp_path) as term:
        if asks:
            term.expect("Trust this folder?")
            term.send("n")
        term.expect(PLACEHOLDER)
        term.send("hello\r")
        term.expect("Hi.")
        leave(term)
        assert "early.sent" not in term.text
    assert last_user_text(fake_llm) == "hello"


# ---- the line editor ----


def fed(data: bytes, sendable: bool = True, columns: int = 80) -> tuple[LineEcho, str]:
    echo = LineEcho(lambda _text: sendable, columns)
    return echo, echo.feed(data)


def test_plain_keys_are_echoed_and_enter_submits() -> None:
    echo, shown = fed(b"hi\r")
    assert (echo.text, echo.done, echo.submitted) == ("hi", True, True)
    assert shown == "\x1b[Khi\r\n"  # the placeholder cleared with the first key
    assert bytes(echo.rest) == b""


def test_backspace_redraws_and_an_empty_line_shows_the_placeholder_again() -> None:
    echo, shown = fed(b"ab\x7f")
    assert echo.text == "a" and shown.endswith("a\x1b[K") and not echo.done
    shown = echo.feed(b"\x7f\x7f")
    assert echo.text == "" and PLACEHOLDER in shown


def test_enter_on_a_line_that_cannot_go_early_hands_it_over() -> None:
    echo, shown = fed(b"/help\r", sendable=False)
    assert echo.done and not echo.submitted and bytes(echo.keys) == b"/help\r" and not shown.endswith("\n")
    echo, _ = fed(b"  \r")  # a blank line is prompt_toolkit's to ignore
    assert echo.done and not echo.submitted


@pytest.mark.parametrize(
    "data",
    [b"ab\x1b[Dc", b"ab\tc", b"ab\x03", b"\x04", "x\u4e2d".encode(), "e\u0301".encode(), b"\xff\xfeab", b"a" * 90],
)
def test_what_is_not_plain_text_ends_reading_and_every_byte_is_kept(data: bytes) -> None:
    echo, _ = fed(data)
    assert echo.done and not echo.submitted
    assert bytes(echo.keys) == data


def test_a_character_split_across_reads_is_one_character() -> None:
    echo = LineEcho(lambda _text: True, 80)
    word = "héllo\r".encode()
    shown = "".join(echo.feed(word[i : i + 1]) for i in range(len(word)))
    assert echo.text == "héllo" and echo.submitted and "héllo" in shown


def test_keys_after_enter_are_kept_for_the_next_prompt() -> None:
    echo, _ = fed(b"go\rnext\x1b[A")
    assert echo.submitted and bytes(echo.keys) == b"go\r" and bytes(echo.rest) == b"next\x1b[A"
    assert echo.feed(b"more") == "" and bytes(echo.rest) == b"next\x1b[Amore"


@given(st.lists(st.binary(max_size=12), max_size=8), st.booleans())
def test_no_byte_is_lost_however_the_keys_come(chunks: list[bytes], sendable: bool) -> None:
    echo = LineEcho(lambda _text: sendable, 40)
    for chunk in chunks:
        echo.feed(chunk)
    assert bytes(echo.keys) + bytes(echo.rest) == b"".join(chunks)
    assert echo.submitted <= echo.done
    assert all(char.isprintable() for char in echo.text)


# ---- what loads before the prompt and the first request ----

HEAVY = ("asyncio", "httpx", "httpcore", "h11", "anyio", "msgspec", "prompt_toolkit", "typing", "ssl", "rich")
"""Loaded after the prompt is up (in the thread, while the first line is typed) or after the first request."""
IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+\d+ \|\s*(\S+)")


def test_the_prompt_is_up_before_anything_heavy_is_imported(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    fake_llm.enqueue(Reply(text="Hi."))
    program = (sys.executable, "-X", "importtime", "-m", "react_agent_mini")
    with Term(env=env_for("openai", fake_llm, TRACE="1"), cwd=tmp_path, program=program) as term:
        term.expect(PLACEHOLDER)
        term.send("hello\r")
        term.expect("Hi.")
        term.expect("out tokens")
        text = term.text
    drawn = text.index(PLACEHOLDER)
    before = set(IMPORT_LINE.findall(text[:drawn]))
    after = set(IMPORT_LINE.findall(text[drawn:]))
    assert "react_agent_mini.early.repl" in before and "prompt_toolkit" in after  # the check sees both sides
    assert {name for name in before if name.split(".")[0] in HEAVY} == set()


def test_what_sends_the_first_line_imports_nothing_heavy() -> None:
    lane = ["early.repl", "early.typed_line", "early.lane", "early.wire", "early.body", "ui.early"]
    code = "import " + ", ".join(f"react_agent_mini.{name}" for name in lane)
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    modules = set(IMPORT_LINE.findall(proc.stderr))
    assert "react_agent_mini.early.typed_line" in modules
    assert {name for name in modules if name.split(".")[0] in HEAVY} == set()
