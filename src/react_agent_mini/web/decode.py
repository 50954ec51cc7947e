"""A page's bytes as text: which character encoding it uses, found as a browser would.

In order: a byte order mark; the `charset` of the Content-Type header; for HTML, a `<meta charset>` or
`<meta http-equiv="Content-Type">` in the first 4 KB; for XML, its declaration; else UTF-8 when the bytes are valid
UTF-8, and windows-1252 (the web's default for unlabelled pages) when they are not. Labels that mean windows-1252
on the web (`iso-8859-1`, `latin1`, `us-ascii`) are read as windows-1252, as the WHATWG Encoding standard says.
Bytes that do not decode become U+FFFD: a page is never refused for its encoding.
"""

from __future__ import annotations

import codecs
import re

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"""^\s*<\?xml[^>]+encoding\s*=\s*["']([A-Za-z0-9._:-]+)""", re.IGNORECASE)
_AS_WINDOWS_1252 = frozenset({"iso-8859-1", "iso8859-1", "latin-1", "latin1", "l1", "us-ascii", "ascii", "cp819"})
SNIFF_BYTES = 4096


def charset_label(label: str) -> str | None:
    """The Python codec for an encoding label, or None when Python knows no such encoding."""
    label = label.strip().strip("\"'").lower()
    if label in _AS_WINDOWS_1252:
        return "cp1252"
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def find_charset(body: bytes, content_type: str, *, html: bool) -> tuple[str, str]:
    """(codec, where it came from: `bom`, `header`, `meta`, `xml`, `utf-8` or `default`)."""
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return bom_codec, "bom"
    header = _HEADER_CHARSET.search(content_type)
    if header is not None and (labelled := charset_label(header.group(1))) is not None:
        return labelled, "header"
    head = body[:SNIFF_BYTES]
    meta = _META_CHARSET.search(head) if html else None
    if meta is not None and (declared := charset_label(meta.group(1).decode("ascii", "replace"))) is not None:
        # a page that is UTF-16 cannot say so in ASCII bytes: its meta tag is wrong (as browsers assume)
        return ("utf-8" if declared.startswith("utf-16") else declared), "meta"
    xml = _XML_ENCODING.search(head)
    if xml is not None and (named := charset_label(xml.group(1).decode("ascii", "replace"))) is not None:
        return named, "xml"
    try:
        body.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a cut at the size limit may split the last character: that alone does not make a page non-UTF-8
        if exc.start < len(body) - 3:
            return "cp1252", "default"
    return "utf-8", "utf-8"


def decode(body: bytes, content_type: str, *, html: bool) -> tuple[str, str]:
    """(the text, the codec used)."""
    codec, _ = find_charset(body, content_type, html=html)
    return body.decode(codec, errors="replace"), codec
