"""One spelling per host, and the addresses a name stands for: what WebFetch's rules compare and where it connects.

A URL can name one host in many spellings, and a rule that compares spellings is dodged by the first one it does
not know: `127。0。0。1`, `2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`, `[::ffff:127.0.0.1]` and `LOCALHOST.`
all reach this machine. `normalize_host` gives every spelling its one form, and both the permission rules
(`permissions.rules.grammar.Domain`) and the fetch (`urls.normalize`, `fetch.get`) use it, so what a rule judged is
what is fetched:
- names: the dots UTS#46 maps (`。` U+3002, `．` U+FF0E, `｡` U+FF61) become `.`, then lower case and UTS#46 mapping,
  then punycode (IDNA) for labels that are not ASCII; one trailing dot is dropped; only letters, digits, `-` and
  `_` may remain, so `\\`, `%`, `@` or a space can never make one host look like another;
- IPv4 in every form `inet_aton` (and so the system resolver) reads — 1 to 4 parts, each decimal, octal (`0`…) or
  hex (`0x`…) — becomes a dotted quad; IPv6 is compressed, and an IPv4-mapped IPv6 address is its IPv4 address.

A name's spelling does not say where it leads: `evil.example` may resolve to 127.0.0.1. So rules that name an
address (`WebFetch(domain:10.0.0.5)`) or this machine (`localhost`, a loopback address, `0.0.0.0`: `is_local`) are
also checked against the addresses the name resolves to (`resolve`, the system resolver, as the fetch uses it).
A name is resolved once per check and the answer is *pinned* (`pin`, `pinned`): the fetch connects to the pinned
addresses and does not ask the resolver again, so a name cannot answer one address to the check and another to
the connection (DNS rebinding). A check resolves again once a pin is `PIN_SECONDS` old; the fetch uses a pin of any
age (it is what the last check saw) and resolves by itself only a name no check resolved — one no rule needed
the addresses of. A check pins only an answer it let through (a denied one would otherwise become what a call
allowed earlier connects to). The permission step is synchronous, so such a lookup holds the session for as long
as the resolver takes — once a minute per name, and only with a rule that needs addresses.

Pins are per process, not per session: in a process with several sessions (the library, `ram batch`), one
session's check may refresh the pin another's fetch then uses; the answer was checked, but against that session's
rules.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import threading
import time
from collections import OrderedDict

PIN_SECONDS = 60.0
"""A check uses a pinned answer this long; then it asks the resolver again (and pins the new answer)."""
MAX_PINS = 4096
"""Pinned names kept at most (the least recently pinned go first)."""
_DOTS = re.compile("[\u3002\uff0e\uff61]")
"""The full stops UTS#46 maps to `.` (ideographic, fullwidth, halfwidth ideographic)."""
_LABEL = re.compile(r"[a-z0-9_-]{1,63}")
_IPV4_PART = re.compile(r"0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*")
"""One part of an IPv4 address as inet_aton reads it: hex (at least one digit), octal (a leading 0) or decimal."""


class BadHost(ValueError):
    """Not a host WebFetch can name: the message says why."""


def normalize_host(text: str) -> str:
    """The one spelling of the host `text` (a URL's host, with or without `[]`), or `BadHost`."""
    host = text.strip()
    if host.startswith("[") and host.endswith("]"):
        return _ipv6(host[1:-1])
    if ":" in host:
        return _ipv6(host)
    host = _DOTS.sub(".", host)
    if not host.isascii():
        host = _uts46(host)
    host = host.lower()
    if host.endswith("."):
        host = host[:-1]
    if not host:
        raise BadHost("the host is empty")
    if (address := ipv4_of(host)) is not None:
        return str(address)
    labels = host.split(".")
    if any(not label for label in labels):
        raise BadHost(f"{host!r} has an empty label")
    for label in labels:
        if not _LABEL.fullmatch(label):
            raise BadHost(f"{host!r} is not a host name (letters, digits, '-' and '_' only, 63 to a label)")
    if len(host) > 253:
        raise BadHost("the host name is longer than 253 characters")
    return host


def ipv4_of(text: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address `text` spells in any form inet_aton accepts (`127.1`, `0x7f000001`, `0177.0.0.1`), else None."""
    parts = text.split(".")
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.fullmatch(part) for part in parts):
        return None
    values = [_ipv4_part(part) for part in parts]
    *leading, last = values
    if any(value > 255 for value in leading) or last >= 256 ** (4 - len(leading)):
        return None
    number = last
    for shift, value in enumerate(reversed(leading), start=4 - len(leading)):
        number |= value << (8 * shift)
    return ipaddress.IPv4Address(number)


def is_ip(host: str) -> bool:
    """True when the normalized `host` is an IP address (not a name)."""
    return ip_of(host) is not None


def ip_of(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address a normalized `host` is, or None for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_local_name(host: str) -> bool:
    """`localhost` and the names below it (RFC 6761: they are this machine)."""
    return host == "localhost" or host.endswith(".localhost")


def is_local_address(address: str) -> bool:
    """A loopback address, or one that connects to this machine: `0.0.0.0` (and 0/8), `::`."""
    ip = ip_of(address)
    if ip is None:
        return False
    return ip.is_loopback or ip.is_unspecified or (ip.version == 4 and ip in _THIS_NETWORK)


def is_local(host: str) -> bool:
    """True when the normalized `host` names this machine by its spelling alone (`localhost`, `127.0.0.1`, `::1`,
    `0.0.0.0`); a name that only resolves to it is found by `resolve`."""
    return is_local_name(host) or is_local_address(host)


def resolve(host: str) -> tuple[str, ...]:
    """The addresses the normalized `host` connects to, as the system resolver answers (normalized, in its order,
    no repeats); an IP address is itself; `()` when the name does not resolve. `UnicodeError` for a label the
    resolver's IDNA codec refuses (`xn--`)."""
    if is_ip(host):
        return (host,)
    try:
        answers = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except socket.gaierror:
        return ()
    found: dict[str, None] = {}
    for _family, _kind, _proto, _name, sockaddr in answers:
        try:
            found[normalize_host(str(sockaddr[0]).split("%", 1)[0])] = None
        except BadHost:
            continue
    return tuple(found)


# ---------------------------------------------------------------- pins: what a check saw is what the fetch connects to

_pins: OrderedDict[str, tuple[float, tuple[str, ...]]] = OrderedDict()
_pins_lock = threading.Lock()


def addresses_to_check(host: str, clock: float | None = None) -> tuple[str, ...]:
    """The addresses a check judges for `host`: the pinned ones while they are fresh, else a new answer (which the
    check then `pin`s if it lets the call through)."""
    now = time.monotonic() if clock is None else clock
    with _pins_lock:
        entry = _pins.get(host)
    if entry is not None and now - entry[0] < PIN_SECONDS:
        return entry[1]
    try:
        return resolve(host)
    except UnicodeError:
        return ()


def pin(host: str, addresses: tuple[str, ...], clock: float | None = None) -> None:
    """Record that a check let `host` through for `addresses`: fetches of `host` connect to these and no others."""
    now = time.monotonic() if clock is None else clock
    with _pins_lock:
        entry = _pins.get(host)
        if entry is not None and entry[1] == addresses and now - entry[0] < PIN_SECONDS:
            return  # the same fresh answer: keep its age, or a name checked every minute would never be asked again
        _pins[host] = (now, addresses)
        _pins.move_to_end(host)
        while len(_pins) > MAX_PINS:
            _pins.popitem(last=False)


def pinned(host: str) -> tuple[str, ...] | None:
    """The addresses the last check of `host` let through (any age), or None when no check resolved it."""
    with _pins_lock:
        entry = _pins.get(host)
    return None if entry is None else entry[1]


def forget_pins() -> None:
    """Drop every pin (for tests that need a resolver's first answer)."""
    with _pins_lock:
        _pins.clear()


def _ipv6(text: str) -> str:
    if "%" in text:
        raise BadHost("an IPv6 zone (`%eth0`) cannot be fetched")
    try:
        address = ipaddress.IPv6Address(text)
    except ValueError:
        raise BadHost(f"{text!r} is not an IPv6 address") from None
    mapped = address.ipv4_mapped
    return str(mapped) if mapped is not None else address.compressed


def _uts46(host: str) -> str:
    import idna  # httpx's own dependency; only hosts that are not ASCII need it

    try:
        mapped = idna.uts46_remap(host, std3_rules=False, transitional=False)
        mapped = _DOTS.sub(".", mapped)
        if mapped.isascii():
            return mapped
        labels = [label if label.isascii() else idna.encode(label).decode("ascii") for label in mapped.split(".")]
    except idna.IDNAError as exc:
        raise BadHost(f"{host!r} is not a valid internationalized host name ({exc})") from None
    return ".".join(labels)


def _ipv4_part(part: str) -> int:
    if part[:2].lower() == "0x":
        return int(part, 16)
    return int(part, 8) if part[:1] == "0" else int(part)


_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
