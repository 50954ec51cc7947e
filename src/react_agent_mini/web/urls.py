"""Which URLs WebFetch fetches, and which redirects it follows.

A URL is http or https with a host and no credentials in it; its host is put in its one spelling
(`hosts.normalize_host`: `127.1` and `LOCALHOST.` are `127.0.0.1` and `localhost`), and that is the URL fetched
and the host the permission rules see. http is upgraded to https except for this machine (`localhost`, loopback
addresses, `0.0.0.0`: a local docs server has no certificate), and the fragment is dropped. A redirect is followed
only when it stays on the same site — same scheme, port and host (compared normalized), a leading `www.` aside, as
Claude Code does — so a rule that allowed `docs.example.com` cannot be walked to another host by a redirect: that
one goes back to the model as a note, and fetching it is a new call, asked for (or allowed) on its own.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from .hosts import BadHost, is_local, normalize_host

MAX_URL_LENGTH = 2000
"""Longer URLs are refused (Claude Code's limit)."""


class BadUrl(ValueError):
    """A URL WebFetch will not fetch; the message says why."""


def host_of(url: str) -> str:
    """The URL's host in its one spelling (`""` when it has none, or none WebFetch could fetch)."""
    try:
        return normalize_host(urlsplit(url).hostname or "")
    except ValueError:  # BadHost is one
        return ""


def fetched_host(url: object) -> str | None:
    """The host WebFetch connects to for `url` as the model wrote it (after `normalize`), or None when it would
    refuse the URL. The permission rules judge this host, so they judge what is fetched."""
    if not isinstance(url, str):
        return None
    try:
        return host_of(normalize(url)) or None
    except BadUrl:
        return None


def is_loopback(host: str) -> bool:
    """`localhost`, `*.localhost`, 127.0.0.0/8, ::1 and `0.0.0.0`, in any spelling."""
    try:
        return is_local(normalize_host(host))
    except BadHost:
        return False


def normalize(url: str) -> str:
    """`url` as it will be fetched: checked, its host normalized, http upgraded to https (not for this machine),
    the fragment dropped."""
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
    if not (parts.hostname or "").rstrip("."):
        raise BadUrl("the URL has no host")
    if parts.username is not None or parts.password is not None:
        raise BadUrl("the URL carries a user name or password; WebFetch does not send credentials")
    try:
        host = normalize_host(parts.hostname or "")
    except BadHost as exc:
        raise BadUrl(f"not a host WebFetch can fetch: {exc}") from None
    if scheme == "http" and not is_local(host):
        scheme = "https"
        if port == 80:
            port = None
    shown_host = f"[{host}]" if ":" in host else host
    netloc = shown_host if port is None else f"{shown_host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def _site(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    host = normalize_host(parts.hostname or "").removeprefix("www.")
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
    except ValueError:  # BadHost is one
        return False
