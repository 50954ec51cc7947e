"""HTML → Markdown for WebFetch: how much of a docs page's content each converter keeps, how much of its chrome
(navigation, scripts, banners) it lets through, and what it costs.

For every page — the docs page the tests serve (`tests/data/web/docs_page.html`, a Material-for-MkDocs layout with
analytics and chat scripts, a cookie banner, header tabs, a sidebar, an "on this page" box and a footer) and any
`--page PATH [MARKERS]` you add — each converter installed here runs: ram's own (`web.markdown`: pruning, then
markdownify), markdownify alone, and, when installed, html2text and trafilatura (`pip install html2text
trafilatura lxml_html_clean` in a scratch venv to compare; ram depends on markdownify only). Per converter: the
median conversion time, the output size, the page's headings and code blocks it kept (on any page: those outside
its navigation, sidebars, site header and footer), content markers kept and noise markers left (marker lists for
the test page are below), and the cold import time of the library (a fresh interpreter, `-X importtime`).

Run: `.venv/bin/python -m benchmarks.web_markdown [--runs N] [--page PATH]`.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

PAGE = Path(__file__).resolve().parent.parent / "tests" / "data" / "web" / "docs_page.html"
CONTENT = [
    "Forecasts (v2)", "Authorization: Bearer", "X-Api-Key", "/v2/forecasts", "temperature_c", "600 requests per minute",
    "Retry-After", "Longitude, −180 to 180", "def forecast(token, lat, lon):", "Breaking changes", "31 March 2027",
    "precipitation_mm", "Handling errors", "import json, urllib.request\n\ndef forecast",
]  # fmt: skip
NOISE = [
    "TRACKING_PIXEL_LOADED", "gtag", "CHAT_WIDGET_SECRET", "Accept all cookies", "Pagination guide", "Webhooks guide",
    "Station metadata", "Careers", "Follow us on Twitter", "Search the docs", "SEARCH_TEMPLATE_ITEM",
    "Please enable JavaScript", "Copied to clipboard", "Was this page helpful", "schema.org", "1.2k stars",
    "Skip to content", "On this page", "Edit this page",
]  # fmt: skip


def _ours(html: str) -> str:
    from react_agent_mini.web.markdown import html_to_markdown

    return html_to_markdown(html, "https://docs.example.org/page/")[0]


def _markdownify(html: str) -> str:
    module: Any = importlib.import_module("markdownify")
    return str(module.markdownify(html, heading_style="ATX"))


def _html2text(html: str) -> str:
    module: Any = importlib.import_module("html2text")
    parser = module.HTML2Text()
    parser.body_width = 0
    return str(parser.handle(html))


def _trafilatura(html: str) -> str:
    module: Any = importlib.import_module("trafilatura")
    options = {"output_format": "markdown", "include_links": True, "include_tables": True, "include_formatting": True}
    return str(module.extract(html, **options) or "")


CONVERTERS: list[tuple[str, str, Callable[[str], str]]] = [
    ("ram (prune + markdownify)", "markdownify", _ours),
    ("markdownify alone", "markdownify", _markdownify),
    ("html2text", "html2text", _html2text),
    ("trafilatura", "trafilatura", _trafilatura),
]


def import_ms(module: str, runs: int = 3) -> float:
    """Median cold import time of `module` in a fresh interpreter."""
    samples = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", f"import {module}"], capture_output=True, text=True
        )
        lines = [line for line in done.stderr.splitlines() if line.rstrip().endswith(f"| {module}")]
        samples.append(int(lines[-1].split("|")[1]) / 1000 if lines else float("nan"))
    return statistics.median(samples)


def _flat(text: str) -> str:
    return re.sub(r"[ \t]+", " ", text)


def _loose(text: str) -> str:
    """Text with Markdown's marks and escapes gone and all white space one space, for finding a page's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a Markdown link: its text
    return " ".join(re.sub(r"[\\*_`#¶§]", "", text).split())


def structure(html: str) -> tuple[list[str], list[str]]:
    """The page's headings (h1–h4) and the first line of each code block, outside its navigation, sidebars,
    site header and footer: what a converter must keep, on any page."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for chrome in soup(["nav", "aside", "button", "script", "style", "noscript", "template"]):
        chrome.decompose()
    for chrome in soup.select('[role="navigation"], body > header, body > footer'):
        chrome.decompose()
    headings = [_loose(h.get_text(" ")) for h in soup.find_all(["h1", "h2", "h3", "h4"])]
    code = []
    for block in soup.find_all("pre"):
        lines = [line for line in block.get_text().splitlines() if line.strip()]
        if lines:
            code.append(_loose(lines[0]))
    return [h for h in headings if h], [c for c in code if c]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.web_markdown", description=__doc__.partition("\n")[0])
    parser.add_argument("--runs", type=int, default=7, metavar="N", help="conversions timed per figure (default 7)")
    parser.add_argument("--page", action="append", default=[], metavar="PATH", help="another HTML page to convert")
    args = parser.parse_args(argv)
    pages = [(PAGE, CONTENT, NOISE), *((Path(p), [], []) for p in args.page)]
    for module in dict.fromkeys(m for _, m, _ in CONVERTERS):
        found = importlib.util.find_spec(module) is not None
        print(f"import {module:<12} " + (f"{import_ms(module):7.1f} ms (cold)" if found else "not installed"))
    for path, content, noise in pages:
        html = path.read_text(encoding="utf-8", errors="replace")
        headings, code = structure(html)
        print(f"\n{path.name}: {len(html):,} characters of HTML, {len(headings)} headings, {len(code)} code blocks")
        for label, module, convert in CONVERTERS:
            if importlib.util.find_spec(module) is None:
                continue
            convert(html)
            samples = []
            for _ in range(max(1, args.runs)):
                start = time.perf_counter()
                out = convert(html)
                samples.append(time.perf_counter() - start)
            flat = _flat(out)
            kept = sum(_flat(c) in flat for c in content)
            left = [n for n in noise if n in out]
            loose = _loose(out)
            kept_structure = sum(h in loose for h in headings), sum(c in loose for c in code)
            marks = f"  headings {kept_structure[0]:3}/{len(headings)}  code {kept_structure[1]:3}/{len(code)}"
            marks += f"  content {kept:2}/{len(content)}  noise {len(left):2}/{len(noise)}" if content else ""
            print(f"  {label:<26} {statistics.median(samples) * 1000:7.1f} ms  {len(out):8,} chars{marks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
