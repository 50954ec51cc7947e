"""WebFetch in the REPL: asked for with the URL it will fetch, and "always" records the host's rule."""

from __future__ import annotations

from pathlib import Path

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..fakes.web_server import Route, WebServer
from ..ui.test_repl_pty import ram_term, sent


def test_a_fetch_is_asked_for_once_per_host_with_always(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    with WebServer() as web:
        first = web.route("/a", Route("<main><p>page A</p></main>"))
        second = web.route("/b", Route("<main><p>page B</p></main>"))
        fake_llm.enqueue(
            Reply(tool_calls=[ToolCall("WebFetch", {"url": first, "prompt": "what is on A?"})]),
            Reply(tool_calls=[ToolCall("WebFetch", {"url": second, "prompt": "and B?"})]),
            Reply(text="both read"),
        )
        with ram_term(fake_llm, tmp_path, ALLOW_WRITE="1") as term:
            term.prompt()
            term.line("read both pages")
            asked = term.expect("Allow? [y/a/N]")
            assert f"Fetch {first}" in asked and "needs permission: it reaches the network" in asked
            assert "a = always allow WebFetch(domain:127.0.0.1) for this session" in asked
            term.send("a")
            shown = term.expect("both read")
            assert "needs permission" not in shown  # the recorded rule allowed the second page: no question
            assert "allowed for this session: WebFetch(domain:127.0.0.1)" in shown
            term.prompt()
            term.send("\x04")
            assert term.wait() == 0
        assert web.hits("/a") == 1 and web.hits("/b") == 1
    results = [str(m["content"]) for m in sent(fake_llm) if m["role"] == "tool"]
    assert "page A" in results[0] and "page B" in results[1]
