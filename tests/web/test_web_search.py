"""WebSearch against loopback search endpoints shaped like SearXNG's JSON API, Brave's and Tavily's; which backend
is configured; domain filters; and the tool as the CLI offers it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from react_agent_mini.app import withheld_credentials
from react_agent_mini.tools.base import ToolContext, ToolInputError
from react_agent_mini.web.search import BraveBackend, SearchBackend, SearxngBackend, TavilyBackend
from react_agent_mini.web.search_config import search_backend
from react_agent_mini.web.search_tool import WebSearchTool, configured_search_tool
from react_agent_mini.web.untrusted import REMINDER, TAG

from ..fakes.fake_llm import FakeLLMServer, Reply, ToolCall
from ..fakes.web_server import Request, Route, WebServer
from ..test_cli import env_for, ram

RESULTS = [
    {"title": "asyncio — Asynchronous I/O", "url": "https://docs.python.org/3/library/asyncio.html",
     "content": "asyncio is a library to write concurrent code using the async/await syntax.", "engine": "duckduckgo"},
    {"title": "asyncio tutorial", "url": "https://realpython.com/async-io-python/", "content": "A walkthrough.",
     "engine": "bing"},
    {"title": "PEP 492", "url": "https://peps.python.org/pep-0492/", "content": "Coroutines with async and await.",
     "engine": "google"},
    {"title": "Spam", "url": "https://spam.example/asyncio", "content": "Buy now!", "engine": "bing"},
    {"title": "", "url": "https://www.python.org/about/", "content": "", "engine": "google"},
]  # fmt: skip


def searxng_route(results: list[dict[str, str]] = RESULTS) -> Route:
    def answer(request: Request) -> str:
        if request.query.get("format") != ["json"]:
            return "<html>the HTML results page</html>"
        return json.dumps({"query": request.query["q"][0], "number_of_results": len(results), "results": results})

    return Route(answer, content_type="application/json")


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


async def search(backend: SearchBackend, tmp_path: Path, **args: object) -> str:
    tool = WebSearchTool(backend)
    output = await tool.call(tool.validate({"query": "python asyncio", **args}), ToolContext(cwd=tmp_path))
    assert not output.is_error, output.content
    return output.content


async def test_searxng_results_come_as_title_url_and_snippet(web: WebServer, tmp_path: Path) -> None:
    web.route("/search", searxng_route())
    content = await search(SearxngBackend(web.url("/"), 5), tmp_path)
    assert content.startswith(f'Web search for "python asyncio" (searxng at 127.0.0.1:{web.port}): 5 results.\n')
    assert (
        "1. asyncio — Asynchronous I/O\n   https://docs.python.org/3/library/asyncio.html\n"
        "   asyncio is a library to write concurrent code using the async/await syntax.\n2. asyncio tutorial"
    ) in content
    assert "5. https://www.python.org/about/\n   https://www.python.org/about/\n" in content  # no title: the URL
    assert f"<{TAG} boundary=" in content and REMINDER in content
    assert content.endswith("Cite the URLs you use; read a page whole with WebFetch.")
    assert web.requests[0].query == {"q": ["python asyncio"], "format": ["json"], "pageno": ["1"]}


async def test_domain_filters_apply_to_what_the_backend_returns(web: WebServer, tmp_path: Path) -> None:
    web.route("/search", searxng_route())
    backend = SearxngBackend(web.url(), 5)
    allowed = await search(backend, tmp_path, allowed_domains=["python.org"])
    assert "3 results (2 left out by the domain filters)." in allowed
    assert "docs.python.org" in allowed and "peps.python.org" in allowed and "www.python.org" in allowed
    assert "realpython.com" not in allowed and "spam.example" not in allowed
    assert web.requests[-1].query["q"] == ["python asyncio site:python.org"]
    blocked = await search(backend, tmp_path, blocked_domains=["spam.example", "realpython.com"])
    assert "3 results (2 left out by the domain filters)." in blocked and "spam.example" not in blocked
    assert web.requests[-1].query["q"] == ["python asyncio -site:spam.example -site:realpython.com"]
    both = await search(backend, tmp_path, allowed_domains=["python.org"], blocked_domains=["peps.python.org"])
    assert "2 results (3 left out" in both and "peps.python.org" not in both


async def test_no_result_left_says_so(web: WebServer, tmp_path: Path) -> None:
    web.route("/search", searxng_route())
    content = await search(SearxngBackend(web.url(), 5), tmp_path, allowed_domains=["nowhere.example"])
    assert content == (
        f'Web search for "python asyncio" (searxng at 127.0.0.1:{web.port}): 0 results (5 left out by the domain '
        "filters). Try other words, or fewer domain restrictions."
    )


async def test_a_searxng_without_json_and_a_slow_backend_fail_in_one_line(web: WebServer, tmp_path: Path) -> None:
    web.route("/search", Route("Forbidden", status=403, content_type="text/plain"))
    tool = WebSearchTool(SearxngBackend(web.url(), 5))
    output = await tool.call(tool.validate({"query": "x y"}), ToolContext(cwd=tmp_path))
    assert output.is_error and output.content == (
        f"WebSearch failed: searxng at 127.0.0.1:{web.port} answered 403 Forbidden "
        "(is `json` listed under `search.formats` in its settings.yml?)."
    )
    web.route("/search", Route("{}", delay=30, content_type="application/json"))
    slow = WebSearchTool(SearxngBackend(web.url(), 0.3))
    output = await slow.call(slow.validate({"query": "x y"}), ToolContext(cwd=tmp_path))
    assert output.content == f"WebSearch failed: searxng at 127.0.0.1:{web.port} did not answer within 0.3 s."


async def test_brave_and_tavily_answers_are_read_and_their_keys_sent(web: WebServer, tmp_path: Path) -> None:
    brave = {"web": {"results": [{"title": "T", "url": "https://a.example/", "description": "D"}]}}
    web.route("/brave", Route.json(brave))
    content = await search(BraveBackend("brave-key", 5, web.url("/brave")), tmp_path, blocked_domains=["b.example"])
    assert "(Brave Search): 1 result.\n" in content and "1. T\n   https://a.example/\n   D" in content
    sent = web.requests[-1]
    assert sent.headers["x-subscription-token"] == "brave-key"
    assert sent.query["q"] == ["python asyncio -site:b.example"] and sent.query["count"] == ["10"]
    web.route("/tavily", Route.json({"results": [{"title": "U", "url": "https://c.example/x", "content": "C"}]}))
    content = await search(TavilyBackend("tv-key", 5, web.url("/tavily")), tmp_path, allowed_domains=["c.example"])
    assert "(Tavily): 1 result.\n" in content and "1. U\n   https://c.example/x\n   C" in content
    sent = web.requests[-1]
    assert sent.headers["authorization"] == "Bearer tv-key"
    assert json.loads(sent.body) == {"query": "python asyncio", "max_results": 10, "include_domains": ["c.example"]}
    web.route("/brave", Route.json({"query": {"original": "x"}}))  # Brave leaves `web` out when nothing matched
    assert "0 results" in await search(BraveBackend("k", 5, web.url("/brave")), tmp_path)


def test_a_one_letter_query_is_refused() -> None:
    with pytest.raises(ToolInputError, match="at least 2"):
        WebSearchTool(SearxngBackend("http://127.0.0.1:9", 1)).validate({"query": " x "})


def test_which_backend_is_configured(tmp_path: Path) -> None:
    base = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    assert search_backend(tmp_path, base) == (None, [])
    searx, _ = search_backend(tmp_path, {**base, "SEARXNG_URL": "http://127.0.0.1:8888", "BRAVE_API_KEY": "k"})
    assert isinstance(searx, SearxngBackend) and searx.base_url == "http://127.0.0.1:8888"
    assert isinstance(search_backend(tmp_path, {**base, "BRAVE_API_KEY": "k"})[0], BraveBackend)
    tavily, _ = search_backend(tmp_path, {**base, "TAVILY_API_KEY": "k", "RAM_WEBFETCH_TIMEOUT": "7"})
    assert isinstance(tavily, TavilyBackend) and tavily.timeout == 7
    user = tmp_path / "config" / "react-agent-mini" / "settings.json"
    user.parent.mkdir(parents=True)
    user.write_text(json.dumps({"webSearch": {"braveApiKey": "from-settings"}}))
    from_settings, warnings = search_backend(tmp_path, base)
    assert isinstance(from_settings, BraveBackend) and warnings == []
    user.write_text(json.dumps({"webSearch": {"unknown": 1}}))
    assert search_backend(tmp_path, base)[0] is None
    project = tmp_path / ".agents" / "settings.json"
    project.parent.mkdir()
    project.write_text(json.dumps({"webSearch": {"searxngUrl": "http://attacker.example"}}))
    user.unlink()
    backend, warnings = search_backend(tmp_path, base)
    assert backend is None
    assert warnings == [f"{project}: `webSearch` is accepted only from the user settings ({user}) (ignored)"]
    assert configured_search_tool(tmp_path, base)[0] is None


def test_search_keys_are_withheld_from_commands(tmp_path: Path) -> None:
    assert {"BRAVE_API_KEY", "TAVILY_API_KEY"} <= withheld_credentials(tmp_path, {})


def test_the_cli_offers_websearch_only_with_a_backend_and_asks_for_it(
    fake_llm: FakeLLMServer, web: WebServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="no search here"))
    plain = ram("--output-format", "stream-json", "hi", env=env_for("openai", fake_llm), cwd=tmp_path)
    assert "WebSearch" not in json.loads(plain.stdout.splitlines()[0])["tools"]
    assert "WebFetch" in json.loads(plain.stdout.splitlines()[0])["tools"]
    web.route("/search", searxng_route())
    env = env_for("openai", fake_llm, SEARXNG_URL=web.url())
    call = ToolCall("WebSearch", {"query": "python asyncio", "blocked_domains": ["spam.example"]})
    fake_llm.enqueue(Reply(tool_calls=[call]), Reply(text="could not search"))
    denied = ram("find asyncio docs", env=env, cwd=tmp_path)
    assert denied.returncode == 0, denied.stderr
    assert 'pass --allowed-tools "WebSearch"' in denied.stderr and web.hits("/search") == 0
    fake_llm.enqueue(Reply(tool_calls=[call]), Reply(text="found them"))
    allowed = ram("--allowed-tools", "WebSearch", "find asyncio docs", env=env, cwd=tmp_path)
    assert allowed.returncode == 0 and allowed.stdout == "found them\n", allowed.stderr
    result = fake_llm.requests[-1].body["messages"][-1]
    assert result["role"] == "tool" and "https://docs.python.org/3/library/asyncio.html" in result["content"]
    assert (
        "spam.example" not in result["content"] and "4 results (1 left out by the domain filters)" in result["content"]
    )
