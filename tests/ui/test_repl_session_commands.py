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


def test_slash_model_lists_the_known_models_and_switches_window_price_and_requests(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="first answer"), Reply(text="second answer"))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("hello")
        term.expect("first answer")
        term.prompt()
        term.line("/model")
        listing = term.expect("gpt-4o-mini")
        assert "model: deepseek-chat (window 128k · $0.28 / $0.42 per Mtok in/out)" in listing
        assert "● deepseek-chat" in term.expect("deepseek-reasoner")
        assert "claude-" not in listing  # an OpenAI-compatible endpoint: Claude models are not offered
        term.prompt()
        term.line("/model gpt-4.1")
        term.expect("model: deepseek-chat → gpt-4.1 (window 1.0M · $2.00 / $8.00 per Mtok in/out)")
        term.prompt()
        term.line("/status")
        status = term.expect("session ")
        assert "openai:gpt-4.1" in status and "of 1,047,576 tokens" in status
        term.prompt()
        term.line("and now?")
        term.expect("second answer")
        term.prompt()
        term.line("/model llama-local")
        term.expect("no cost is shown")
        term.prompt()
        term.line("/model two words")
        term.expect("usage: /model")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    assert [r.body["model"] for r in fake_llm.requests] == ["deepseek-chat", "gpt-4.1"]
    assert "Traceback" not in term.text


def test_slash_export_writes_markdown_to_a_file_or_the_clipboard_by_osc52(
    fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    import base64
    import re

    from ..fakes.fake_llm import ToolCall

    (tmp_path / "a.txt").write_text("line with ``` fences\n")
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "a.txt"})]), Reply(text="It has **fences**."))
    with ram_term(fake_llm, tmp_path) as term:
        term.prompt()
        term.line("/export")
        term.expect("nothing to export yet")
        term.prompt()
        term.line("read a.txt")
        term.expect("It has")
        term.prompt()
        term.line("/export out/chat.md")
        term.expect("characters of Markdown) to out/chat.md")
        term.prompt()
        term.line("/export")
        term.expect("to the clipboard by OSC 52")
        term.prompt()
        term.line("/export /proc/no/such/place.md")
        term.expect("error: cannot write /proc/no/such/place.md")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    written = (tmp_path / "out" / "chat.md").read_text()
    assert written.startswith("# ram session ")
    assert "## You\n\nread a.txt" in written and "## Assistant\n\nIt has **fences**." in written
    assert "**Read** `a.txt`" in written and "````\n" in written and "line with ``` fences" in written
    copied = re.search(rb"\x1b\]52;c;([A-Za-z0-9+/=]+)\x07", term.raw)
    assert copied is not None and base64.b64decode(copied.group(1)).decode() == written
    assert "Traceback" not in term.text


def test_slash_context_shows_each_part_the_reserve_and_the_threshold(fake_llm: FakeLLMServer, trusted: Path) -> None:
    import json
    import re
    import sys

    from ..fakes.fake_llm import ToolCall
    from ..fakes.mcp_servers import support

    tmp_path = trusted
    config = {"mcpServers": {"toolbox": {"command": sys.executable, "args": [str(support.TOOLBOX)]}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    (tmp_path / "AGENTS.md").write_text("Always write tests first. " * 400)
    (tmp_path / "data.txt").write_text("some data line\n" * 800)
    fake_llm.enqueue(Reply(tool_calls=[ToolCall("Read", {"file_path": "data.txt"})]), Reply(text="Read it."))
    with ram_term(fake_llm, tmp_path, AUTOCOMPACT_PERCENT="50") as term:
        term.prompt()
        term.line("read data.txt please")
        term.expect("Read it.")
        term.prompt()
        term.line("/context")
        shown = term.expect("the highlighted cell marks the compaction threshold")
        term.expect("(50% of the window)")
        term.prompt()
        term.send("\x04")
        assert term.wait() == 0
    rows = dict(re.findall(r"[⛁⛶⛝] (.+?) +([\d,]+) +[\d.]+%", shown))
    tokens = {label.strip(): int(count.replace(",", "")) for label, count in rows.items()}
    for part in ("system prompt", "tool schemas: built-in", "MCP tools: toolbox", "your messages", "model's messages"):
        assert tokens.get(part, 0) > 0, (part, tokens)
    assert tokens["project instructions (AGENTS.md, CLAUDE.md)"] > 1500  # 10,400 characters
    assert tokens["tool results: Read"] > 1000  # 12,000 characters of file, with line numbers
    reserve = next(v for k, v in tokens.items() if k.startswith("reserve past the compaction threshold"))
    assert reserve == 64_000  # half of deepseek-chat's 128k window, with AUTOCOMPACT_PERCENT=50
    used = sum(v for k, v in tokens.items() if k != "free space" and not k.startswith("reserve"))
    assert tokens["free space"] == 128_000 - 64_000 - used
    assert f"{used:,} of 128,000 tokens" in shown
    grid = [line for line in shown.splitlines() if line.count("⛁") + line.count("⛶") + line.count("⛝") == 10]
    assert len(grid) == 10 and grid[-1].count("⛝") == 10 and grid[0].count("⛁") >= 1  # the reserve fills the end
    assert sum(line.count("⛁") for line in grid) == round(used / 1280)  # one cell per 1% of the window
    assert "Traceback" not in term.text
