"""Web search backends: a SearXNG instance's JSON API, Brave Search, Tavily — each a query in, results out.

Every backend returns `SearchResult`s (title, URL, snippet). Domain filters are applied here to whatever a backend
returns (a host and the hosts below it, as `example.com` covers `docs.example.com`), and also passed to the
backend so it returns fitting results in the first place: Tavily takes the lists; SearXNG and Brave get
`site:`/`-site:` operators in the query (one allowed domain; every blocked one). Failures are `SearchFailed` with
one line for the model.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any, Protocol
from urllib.parse import urlsplit

import msgspec

from .fetch import HEADERS

RESULTS_WANTED = 10
"""Results asked of the backend (before the domain filters)."""


class SearchResult(msgspec.Struct, frozen=True):
    title: str
    url: str
    snippet: str


class SearchFailed(Exception):
    """The backend gave no results; the message is one line for the model."""


class SearchBackend(Protocol):
    @property
    def name(self) -> str:
        """How the result names the backend: `searxng at search.example.org`, `Brave`, `Tavily`."""
        ...

    async def search(self, query: str, allowed: Sequence[str], blocked: Sequence[str]) -> list[SearchResult]:
        """Results for `query` (the domain lists are hints; `filter_results` applies them)."""
        ...


def host_matches(url: str, domains: Iterable[str]) -> bool:
    """True when `url`'s host is one of `domains` or below one (`docs.python.org` is below `python.org`)."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return False
    for domain in domains:
        domain = domain.strip().lower().rstrip(".").removeprefix("*.")
        domain = (urlsplit(domain).hostname or domain) if "//" in domain else domain
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


def filter_results(
    results: Iterable[SearchResult], allowed: Sequence[str], blocked: Sequence[str]
) -> tuple[list[SearchResult], int]:
    """The results the domain lists let through, and how many they left out."""
    kept, dropped = [], 0
    for result in results:
        if (allowed and not host_matches(result.url, allowed)) or host_matches(result.url, blocked):
            dropped += 1
        else:
            kept.append(result)
    return kept, dropped


def with_operators(query: str, allowed: Sequence[str], blocked: Sequence[str]) -> str:
    """The query with `site:` operators for engines that read them."""
    parts = [query.strip()]
    if len(allowed) == 1:
        parts.append(f"site:{allowed[0].strip()}")
    parts += [f"-site:{domain.strip()}" for domain in blocked if domain.strip()]
    return " ".join(parts)


class SearxngBackend:
    """A SearXNG instance's `/search?format=json` (its settings must list `json` under `search.formats`)."""

    def __init__(self, base_url: str, timeout: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    @property
    def name(self) -> str:
        return f"searxng at {urlsplit(self.base_url).netloc or self.base_url}"

    async def search(self, query: str, allowed: Sequence[str], blocked: Sequence[str]) -> list[SearchResult]:
        params = {"q": with_operators(query, allowed, blocked), "format": "json", "pageno": "1"}
        hint = "is `json` listed under `search.formats` in its settings.yml?"
        data = await _request(self, hint, "GET", f"{self.base_url}/search", params=params)
        return _results(data, ("results",), "content", self.name, hint)


class _HostedBackend:
    """A search service with an API key and a fixed endpoint (the endpoint is a parameter for tests)."""

    ENDPOINT = ""
    NAME = ""

    def __init__(self, key: str, timeout: float, endpoint: str | None = None) -> None:
        self._key = key
        self.timeout = timeout
        self.endpoint = endpoint or self.ENDPOINT

    @property
    def name(self) -> str:
        return self.NAME


class BraveBackend(_HostedBackend):
    """Brave Search's web search API (`BRAVE_API_KEY`)."""

    ENDPOINT = "https://api.search.brave.com/res/v1/web/search"
    NAME = "Brave Search"

    async def search(self, query: str, allowed: Sequence[str], blocked: Sequence[str]) -> list[SearchResult]:
        params = {"q": with_operators(query, allowed, blocked), "count": str(RESULTS_WANTED)}
        headers = {"X-Subscription-Token": self._key, "Accept": "application/json"}
        hint = "is BRAVE_API_KEY right?"
        data = await _request(self, hint, "GET", self.endpoint, params=params, headers=headers)
        return _results(data, ("web", "results"), "description", self.name, hint)


class TavilyBackend(_HostedBackend):
    """Tavily's search API (`TAVILY_API_KEY`)."""

    ENDPOINT = "https://api.tavily.com/search"
    NAME = "Tavily"

    async def search(self, query: str, allowed: Sequence[str], blocked: Sequence[str]) -> list[SearchResult]:
        body: dict[str, Any] = {"query": query, "max_results": RESULTS_WANTED}
        if allowed:
            body["include_domains"] = list(allowed)
        if blocked:
            body["exclude_domains"] = list(blocked)
        headers = {"Authorization": f"Bearer {self._key}"}
        hint = "is TAVILY_API_KEY right?"
        data = await _request(self, hint, "POST", self.endpoint, json=body, headers=headers)
        return _results(data, ("results",), "content", self.name, hint)


class _Timed(Protocol):
    timeout: float

    @property
    def name(self) -> str: ...


async def _request(backend: _Timed, hint: str, method: str, url: str, **kwargs: Any) -> Any:
    import httpx

    headers = {**HEADERS, "Accept": "application/json", **kwargs.pop("headers", {})}
    try:
        async with asyncio.timeout(backend.timeout):
            async with httpx.AsyncClient(timeout=backend.timeout, follow_redirects=True, headers=headers) as client:
                response = await client.request(method, url, **kwargs)
    except (TimeoutError, httpx.TimeoutException):
        raise SearchFailed(f"{backend.name} did not answer within {backend.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise SearchFailed(f"could not reach {backend.name}: {type(exc).__name__}: {exc}") from None
    except (httpx.InvalidURL, UnicodeError, ValueError) as exc:  # SEARXNG_URL is not a URL httpx can use
        raise SearchFailed(f"could not reach {backend.name}: not a valid URL ({type(exc).__name__}: {exc})") from None
    if response.status_code >= 400:
        from .untrusted import status_text  # the standard phrase: the server's own is its words, not ours

        where = f"{backend.name} answered {status_text(response.status_code)}"
        raise SearchFailed(f"{where} ({hint})" if response.status_code < 500 else where)
    try:
        return response.json()
    except ValueError:
        raise SearchFailed(f"{backend.name} did not answer with JSON") from None


def _results(data: Any, path: tuple[str, ...], snippet_key: str, name: str, hint: str) -> list[SearchResult]:
    node = data
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    if node is None and isinstance(data, dict) and path[0] == "web":
        return []  # Brave leaves `web` out when nothing matched
    if not isinstance(node, list):
        raise SearchFailed(f"{name} answered JSON without a result list ({hint})")
    out = []
    for item in node:
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            continue
        title = " ".join(str(item.get("title") or "").split())
        snippet = " ".join(str(item.get(snippet_key) or "").split())
        out.append(SearchResult(title or item["url"], item["url"], snippet))
    return out
