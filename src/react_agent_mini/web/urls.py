"""Which URLs WebFetch fetches, and which redirects it follows.

A URL is http or https with a host and no credentials in it; http is upgraded to https except for loopback
addresses (a local docs server has no certificate), and the fragment is dropped. A redirect is followed only when
it stays on the same site — same scheme, port and host, a leading `www.` aside, as Claude Code does — so a rule
that allowed `docs.example.com` cannot be walked to another host by a redirect: that one goes back to the model as
a note, and fetching it is a new call, asked for (or allowed) on its own.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit, urlunsplit

MAX_URL_LENGTH = 2000
"""Longer URLs are refused (Claude Code's limit)."""


class BadUrl(ValueError):
    """A URL WebFetch will not fetch; the message says why."""


def host_of(url: str) -> str:
    """The URL's host, lower-cased and without a trailing dot (`""` when it has none)."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def is_loopback(host: str) -> bool:
    """`localhost`, `*.localhost`, 127.0.0.0/8 and ::1."""
    host = host.strip("[]").rstrip(".").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def normalize(url: str) -> str:
    """`url` as it will be fetched: checked, http upgraded to https (not for loopback), fragment dropped."""
    url = url.strip()
    if len(url) > MAX_URL_LENGTH:
        raise BadUrl(f"the URL is {len(url):,} characters long; at most {MAX_URL_LENGTH:,} are fetched")
    try:
        parts = urlsplit(url)
        port = parts.port  # raises for a port that is not a number
    except ValueError as exc:
        raise BadUrl(f"not a valid URL: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise BadUrl("only http:// and https:// URLs can be fetched" + (f" (not {scheme}:)" if scheme else ""))
    host = (parts.hostname or "").rstrip(".")
    if not host:
        raise BadUrl("the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise BadUrl("the URL carries a user name or password; WebFetch does not send credentials")
    if scheme == "http" and not is_loopback(host):
        scheme = "https"
        if port == 80:
            port = None
    shown_host = f"[{host}]" if ":" in host else host
    netloc = shown_host if port is None else f"{shown_host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def _site(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    host = host_of(url).removeprefix("www.")
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    port = parts.port if parts.port != default else None
    return parts.scheme.lower(), host, port


def same_site(original: str, target: str) -> bool:
    """True when a redirect from `original` to `target` stays on the same site (followed without asking)."""
    try:
        parts = urlsplit(target)
        if parts.username is not None or parts.password is not None:
            return False
        return _site(original) == _site(target)
    except ValueError:
        return False
