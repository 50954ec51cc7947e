"""A fetched body as text for the model: HTML as Markdown, text and JSON as they are, anything else refused.

The kind comes from the Content-Type header, or, without one, from a look at the first bytes. Decoding follows
`decode.py`. What comes out is a `Page`, the unit the cache keeps. Its `content_type` and `title` are the
server's words: `media_label` is the form of the type that may be shown outside the untrusted-content boundary (a
type from a fixed list, else only its family), and the title goes inside it (`fetch_tool.py`).
"""

from __future__ import annotations

import msgspec

from .decode import SNIFF_BYTES, decode
from .fetch import Response

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = (
    "application/json", "application/ld+json", "application/xml", "application/javascript",
    "application/x-javascript", "application/x-yaml", "application/yaml", "application/toml",
    "application/x-sh", "application/sql", "image/svg+xml",
)  # fmt: skip
_LISTED_TYPES = frozenset({
    *_HTML_TYPES, *_TEXT_TYPES, "text/plain", "text/markdown", "text/x-markdown", "text/css", "text/csv",
    "text/xml", "text/javascript", "text/x-python", "text/x-rst", "text/yaml", "application/octet-stream",
    "binary/octet-stream", "application/pdf", "application/zip", "application/gzip", "application/x-tar",
    "application/wasm", "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/x-icon",
    "image/vnd.microsoft.icon", "audio/mpeg", "audio/ogg", "video/mp4", "video/webm", "font/woff", "font/woff2",
})  # fmt: skip
_FAMILIES = frozenset({"text", "application", "image", "audio", "video", "font", "model", "multipart", "message"})


class Page(msgspec.Struct, frozen=True):
    """A fetched page, as the model reads it."""

    url: str
    """Where it was fetched from (after same-site redirects)."""
    status: int
    content_type: str
    """The media type the server named (lower case, no parameters): its words, shown only as `media_label`."""
    kind: str
    """`markdown` (converted from HTML), `text` or `json`."""
    text: str
    title: str
    """The HTML `<title>`: the page's words, shown only inside the boundary."""
    bytes: int
    """Bytes read."""
    truncated: bool
    """True when the body went on past the size limit."""


class NotText(Exception):
    """The body is not something the model can read (an image, a PDF, an archive)."""


def page_of(response: Response) -> Page:
    """The `Page` of a response, or `NotText`."""
    media = response.content_type.split(";", 1)[0].strip().lower()
    kind = _kind(media, response.body)
    if kind is None:
        raise NotText(media_label(media) if media else "binary data")
    text, _codec = decode(response.body, response.content_type, html=kind == "markdown")
    title = ""
    if kind == "markdown":
        from .markdown import html_to_markdown

        text, title = html_to_markdown(text, response.url)
    return Page(
        response.url,
        response.status,
        media,
        kind,
        text,
        title,
        len(response.body),
        response.truncated,
    )


def media_label(media: str) -> str:
    """`media` as a plain token: itself when it is a type from a fixed list, else only its family (`text/(other)`,
    `application/(other)+json`), never the rest of what the server wrote."""
    if media in _LISTED_TYPES:
        return media
    family = media.split("/", 1)[0]
    suffix = next((s for s in ("+json", "+xml") if media.endswith(s)), "")
    return f"{family}/(other){suffix}" if family in _FAMILIES else "an unknown type"


def _kind(media: str, body: bytes) -> str | None:
    if media in _HTML_TYPES:
        return "markdown"
    if media == "application/json" or media.endswith("+json"):
        return "json"
    if media.startswith("text/") or media in _TEXT_TYPES or media.endswith("+xml"):
        return "text"
    if media and media not in ("application/octet-stream", "binary/octet-stream"):
        return None
    head = body[:SNIFF_BYTES]
    if b"\x00" in head and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    start = head.lstrip()[:512].lower()
    if start.startswith((b"<!doctype html", b"<html")) or b"<html" in start:
        return "markdown"
    return "text"
