"""A fetched body as text for the model: HTML as Markdown, text and JSON as they are, anything else refused.

The kind comes from the Content-Type header, or, without one, from a look at the first bytes. Decoding follows
`decode.py`. What comes out is a `Page`, the unit the cache keeps.
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


class Page(msgspec.Struct, frozen=True):
    """A fetched page, as the model reads it."""

    url: str
    """Where it was fetched from (after same-site redirects)."""
    status: int
    reason: str
    content_type: str
    kind: str
    """`markdown` (converted from HTML), `text` or `json`."""
    text: str
    title: str
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
        raise NotText(media or "binary data")
    text, _codec = decode(response.body, response.content_type, html=kind == "markdown")
    title = ""
    if kind == "markdown":
        from .markdown import html_to_markdown

        text, title = html_to_markdown(text, response.url)
    return Page(
        response.url,
        response.status,
        response.reason,
        media,
        kind,
        text,
        title,
        len(response.body),
        response.truncated,
    )


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
