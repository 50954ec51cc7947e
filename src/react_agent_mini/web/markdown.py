"""HTML to Markdown for the model: the page's content, without its navigation, scripts and chrome.

Two steps. First the page is pruned with BeautifulSoup (the parser markdownify works on): scripts, styles,
navigation, sidebars, forms, buttons, dialogs, SVG, iframes and hidden elements go; what is left is narrowed to the
page's one `<article>`, else its one `<main>` (or `role="main"`), else the body, and site headers and footers
without a heading go too; images become their alt text; links are made absolute so the model can fetch them, and
links to a place on the same page (heading anchors, `¶`) keep only their text. Then markdownify turns what is
left into Markdown: ATX headings, fenced code blocks with the language the page gives (`language-python`,
`highlight-python3`), pipe tables, nothing escaped that a reader would have to unescape.

Chosen by measurement (`benchmarks/web_markdown.py`): on the test docs page and on real Sphinx, mdBook and rustdoc
pages this keeps every content heading and code block and leaves 2 of 19 pieces of chrome, where trafilatura
(which also drops chrome) lost 20 of the 35 headings of a Sphinx page, a code block of a rustdoc page and the blank
lines inside code, and html2text (GPL) and markdownify alone leave 14 and 13 of the 19. Imported on the first HTML
page (≈80 ms).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

MAX_HTML_CHARS = 3_000_000
"""Only the first this many characters of a page are converted (≈2 s of work at most); the rest is left out."""

_DROPPED = (
    "script", "style", "noscript", "template", "nav", "aside", "form", "button", "select", "input", "textarea",
    "label", "svg", "canvas", "iframe", "object", "embed", "dialog", "link", "meta",
)  # fmt: skip
_DROPPED_SELECTORS = '[role="navigation"], [role="dialog"], [role="banner"], [aria-hidden="true"], [hidden]'
_LANGUAGE = re.compile(r"^(?:language|lang|highlight|sourceCode)-([A-Za-z0-9_+#.-]+)$")
_BLANK_RUNS = re.compile(r"\n{3,}")
_TRAILING_SPACES = re.compile(r"[ \t]+\n")


def html_to_markdown(html: str, base_url: str) -> tuple[str, str]:
    """(Markdown of the page's content, its title)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html[:MAX_HTML_CHARS], "html.parser")
    title = " ".join(soup.title.get_text().split()) if soup.title is not None else ""
    root = _content(soup)
    _tidy(root, base_url)
    converter = MarkdownConverter(
        heading_style="ATX",
        bullets="-",
        escape_asterisks=False,
        escape_underscores=False,
        escape_misc=False,
        code_language_callback=_code_language,
    )
    text = converter.convert_soup(root)
    text = _BLANK_RUNS.sub("\n\n", _TRAILING_SPACES.sub("\n", text)).strip()
    return text, title


def _content(soup: BeautifulSoup) -> Tag:
    """The element holding the page's content, with the chrome around and inside it removed."""
    for element in soup(_DROPPED):
        element.decompose()
    for element in soup.select(_DROPPED_SELECTORS):
        element.decompose()
    articles = soup.find_all("article")
    mains = soup.find_all("main") or soup.select('[role="main"]')
    root: Tag = soup
    if len(articles) == 1:
        root = articles[0]
    elif len(mains) == 1:
        root = mains[0]
    elif soup.body is not None:
        root = soup.body
    for element in root.find_all(["header", "footer"]):
        if element.find(["h1", "h2"]) is None:  # a site header or footer; an article's own header keeps its title
            element.decompose()
    return root


def _tidy(root: Tag, base_url: str) -> None:
    """Images as their alt text; links absolute, or plain text when they point within the page."""
    for image in root.find_all("img"):
        alt = " ".join(str(image.get("alt") or "").split())
        image.replace_with(f"[image: {alt}]" if alt else "")
    for link in root.find_all("a"):
        href = str(link.get("href") or "").strip()
        text = link.get_text().strip()
        if text in ("¶", "#", "§", "🔗", ""):
            link.decompose()
        elif not href or href.startswith(("#", "javascript:")):
            link.unwrap()
        else:
            link.attrs = {"href": urljoin(base_url, href)}


def _code_language(element: Tag) -> str | None:
    """The language a code block names in its classes, or its parent's (`<div class="language-python">`)."""
    for candidate in (element, element.find("code"), element.parent):
        classes = candidate.get("class") if candidate is not None and hasattr(candidate, "get") else None
        for name in classes or ():
            if match := _LANGUAGE.match(str(name)):
                language = match.group(1).lower()
                return re.sub(r"\d+$", "", language) or language  # highlight-python3 → python
    return None
