"""Hosts in one spelling (`web.hosts`), and WebFetch's rules and fetch judging the host they really reach.

A deny rule that compares spellings is dodged by the first spelling it does not know; a rule that compares only
names is dodged by a name that resolves to the address it names; a check that resolves is dodged by a name that
answers the check with one address and the connection with another. The property tests give `normalize_host`
every inet_aton spelling of an address (checked against the C library's own `inet_aton`), IPv6 forms, and names
with the full stops UTS#46 maps; the rest goes through `PermissionPolicy` and `WebFetchTool` in this process, as a
session does, against the loopback web server. Names other than loopback ones are answered by a stand-in for the
system resolver (`socket.getaddrinfo` replaced for the test), so nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import ipaddress
import shutil
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from react_agent_mini.permissions.policy import Allow, Deny, PermissionPolicy
from react_agent_mini.permissions.rules import RuleError, RuleSet, parse_rule
from react_agent_mini.tools.base import ToolContext, ToolOutput
from react_agent_mini.web.fetch_tool import WebFetchTool
from react_agent_mini.web.hosts import BadHost, forget_pins, ipv4_of, normalize_host, pinned
from react_agent_mini.web.urls import normalize, same_site

from ..fakes.web_server import Route, WebServer

# ---------------------------------------------------------------- normalize_host, property by property


@st.composite
def ipv4_spellings(draw: st.DrawFn) -> tuple[int, str]:
    """An IPv4 address and one of the ways inet_aton reads it: 1 to 4 parts, each decimal, octal or hex."""
    number = draw(st.integers(0, 2**32 - 1))
    parts = draw(st.integers(1, 4))
    values = [(number >> (8 * (3 - i))) & 0xFF for i in range(parts - 1)]
    values.append(number & ((1 << (8 * (5 - parts))) - 1))
    spelled = []
    for value in values:
        radix = draw(st.sampled_from(["dec", "oct", "hex"]))
        zeros = "0" * draw(st.integers(0, 3))
        if radix == "dec":
            spelled.append(str(value) if value else "0")
        elif radix == "oct":
            spelled.append("0" + zeros + format(value, "o"))
        else:
            digits = format(value, "x")
            digits = digits.upper() if draw(st.booleans()) else digits
            spelled.append(draw(st.sampled_from(["0x", "0X"])) + zeros + digits)
    return number, ".".join(spelled)


@given(ipv4_spellings(), st.booleans())
def test_every_inet_aton_spelling_of_an_address_is_its_dotted_quad(spelling: tuple[int, str], dot: bool) -> None:
    number, text = spelling
    address = ipaddress.IPv4Address(number)
    assert socket.inet_aton(text) == address.packed  # the C library reads it as that address: so does the resolver
    assert normalize_host(text + ("." if dot else "")) == str(address)
    assert normalize_host(text.replace(".", "。")) == str(address)


@given(st.text(alphabet="0123456789xXabcdef.", min_size=1, max_size=14))
def test_what_is_an_ipv4_address_agrees_with_inet_aton(text: str) -> None:
    try:
        expected: ipaddress.IPv4Address | None = ipaddress.IPv4Address(socket.inet_aton(text))
    except OSError:
        expected = None
    assert ipv4_of(text) == expected


@given(st.integers(0, 2**128 - 1))
def test_every_ipv6_spelling_is_one_host_and_mapped_ipv4_is_the_ipv4(number: int) -> None:
    address = ipaddress.IPv6Address(number)
    expected = str(address.ipv4_mapped) if address.ipv4_mapped else address.compressed
    for text in (address.exploded, address.compressed, address.exploded.upper(), f"[{address.compressed}]"):
        assert normalize_host(text) == expected


@given(st.integers(0, 2**32 - 1))
def test_an_ipv4_mapped_ipv6_address_is_its_ipv4_address(number: int) -> None:
    v4 = ipaddress.IPv4Address(number)
    assert normalize_host(f"::ffff:{v4}") == normalize_host(f"[::FFFF:{number >> 16:x}:{number & 0xFFFF:x}]") == str(v4)


LABELS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=10)


@given(st.lists(LABELS, min_size=2, max_size=4), st.lists(st.sampled_from(".。．｡"), min_size=3, max_size=3))
def test_a_name_is_one_host_whatever_its_full_stops_and_case(labels: list[str], dots: list[str]) -> None:
    name = ".".join(labels)
    if ipv4_of(name) is not None:
        return  # all-digit labels spell an address: the test above covers those
    spelled = labels[0].upper() + "".join(dot + label for dot, label in zip(dots, labels[1:], strict=False))
    assert normalize_host(spelled) == normalize_host(spelled + dots[-1]) == name


def test_names_in_other_scripts_become_punycode_and_refused_characters_are_refused() -> None:
    assert normalize_host("Bücher.Example") == "xn--bcher-kva.example"
    assert normalize_host("ｄｏｃｓ．python．org") == "docs.python.org"  # fullwidth: UTS#46 maps it to ASCII
    assert normalize_host("dоcs.python.org") != "docs.python.org"  # a Cyrillic о is another host
    assert normalize_host("LOCALHOST.") == "localhost"
    for bad in ("docs.python.org\\@evil.com", "evil.com\\.docs.python.org", "a%2eb", "a b", "a..b", "", "x／y.io"):
        with pytest.raises(BadHost):
            normalize_host(bad)


# ---------------------------------------------------------------- the rules, in a session's policy

FETCH = WebFetchTool()


def rules(**lists: list[str]) -> RuleSet:
    found = RuleSet()
    for kind, texts in lists.items():
        for text in texts:
            assert found.add(kind, text, "settings.json") is None  # type: ignore[arg-type]
    return found


async def decide(tmp_path: Path, found: RuleSet, url: str) -> Allow | Deny:
    decision = await PermissionPolicy(tmp_path, rules=found).decide(FETCH, {"url": url, "prompt": "p"})
    assert isinstance(decision, Allow | Deny)
    return decision


@pytest.fixture(autouse=True)
def no_pins() -> Iterator[None]:
    forget_pins()
    yield
    forget_pins()


SPELLINGS_OF_THIS_MACHINE = [
    "http://127。0。0。1:8123/", "http://127．0．0．1:8123/", "http://127｡0｡0｡1:8123/", "http://2130706433:8123/",
    "http://0x7f000001:8123/", "http://0177.0.0.1:8123/", "http://127.1:8123/", "http://0:8123/",
    "http://0.0.0.0:8123/", "http://[::ffff:127.0.0.1]:8123/", "http://localhost:8123/", "http://LOCALHOST./",
    "http://127.0.0.2:8123/", "http://[::1]:8123/", "http://api.localhost:8123/",
]  # fmt: skip


@pytest.mark.parametrize("denied", ["127.0.0.1", "localhost", "::1", "[::1]", "0.0.0.0", "LocalHost."])
@pytest.mark.parametrize("url", SPELLINGS_OF_THIS_MACHINE)
async def test_a_deny_rule_on_this_machine_covers_every_spelling_of_it(tmp_path: Path, denied: str, url: str) -> None:
    decision = await decide(tmp_path, rules(allow=["WebFetch"], deny=[f"WebFetch(domain:{denied})"]), url)
    assert isinstance(decision, Deny) and f"blocked by the deny rule WebFetch(domain:{denied})" in decision.message


@pytest.mark.parametrize(
    ("url", "denied"),
    [
        ("http://10.0.0.5/", True), ("https://0xa000005/", True), ("https://10.5/", True),
        ("https://[::ffff:10.0.0.5]/", True), ("https://012.0.0.05/", True), ("https://10.0.0.6/", False),
        ("http://127.0.0.1:8123/", False),
    ],
)  # fmt: skip
async def test_a_deny_rule_on_an_address_covers_its_spellings(tmp_path: Path, url: str, denied: bool) -> None:
    decision = await decide(tmp_path, rules(allow=["WebFetch"], deny=["WebFetch(domain:10.0.0.5)"]), url)
    assert isinstance(decision, Deny) is denied


@pytest.mark.parametrize(
    ("rule", "url"),
    [
        ("docs.python.org", "https://docs.python.org.evil.com/"),
        ("docs.python.org", "https://docs.python.org@evil.com/"),
        ("docs.python.org", "https://docs.python.org:443@evil.com/"),
        ("docs.python.org", "https://docs.python.org\\@evil.com/"),
        ("docs.python.org", "https://evil.com\\docs.python.org/"),
        ("docs.python.org", "https://evil.com\\.docs.python.org/"),
        ("docs.python.org", "https://docs.python.org%2eevil.com/"),
        ("docs.python.org", "https://docs.python.org%40evil.com/"),
        ("docs.python.org", "https://evil.com#@docs.python.org"),
        ("docs.python.org", "https://evil.com?@docs.python.org"),
        ("docs.python.org", "https://evil.com/docs.python.org"),
        ("docs.python.org", "https://dоcs.python.org/"),  # a Cyrillic о
        ("docs.python.org", "https://api.docs.python.org/"),
        ("*.python.org", "https://evil.com\\.python.org/"),
        ("*.python.org", "https://python.org.evil.com/"),
        ("127.0.0.1", "http://localhost:8123/"),  # allow grants the host it names, not the machine
        ("localhost", "http://127.0.0.1:8123/"),
    ],
)
async def test_an_allow_rule_is_not_widened_by_spellings(tmp_path: Path, rule: str, url: str) -> None:
    assert isinstance(await decide(tmp_path, rules(allow=[f"WebFetch(domain:{rule})"]), url), Deny)


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.python.org/3/",
        "https://DOCS.python.org./3/",
        "https://docs。python。org/",
        "http://docs.python.org/",
    ],
)
async def test_an_allow_rule_still_grants_its_own_host_in_any_spelling(tmp_path: Path, url: str) -> None:
    assert isinstance(await decide(tmp_path, rules(allow=["WebFetch(domain:docs.python.org)"]), url), Allow)


def test_rules_name_hosts_in_one_spelling_and_refuse_what_is_no_host() -> None:
    assert parse_rule("WebFetch(domain:Docs.Example.com)").specifier == "domain:Docs.Example.com"  # kept as written
    for bad in ("WebFetch(domain:a\\b.io)", "WebFetch(domain:*.10.0.0.1)", "WebFetch(domain:a%2eb)"):
        with pytest.raises(RuleError):
            parse_rule(bad)


# ---------------------------------------------------------------- names that resolve: the check and the connection


class Resolver:
    """A stand-in for the system resolver: `answers[name]` is the list of addresses it answers, one per lookup
    (the last one again once they run out); other names go to the real one (loopback names only, in these tests)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, **answers: list[str]) -> None:
        self.answers = {name.replace("_", "."): list(addresses) for name, addresses in answers.items()}
        self.lookups: list[str] = []
        real: Callable[..., Any] = socket.getaddrinfo

        def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
            name = host.decode() if isinstance(host, bytes) else str(host)
            if name not in self.answers:
                return real(host, port, *args, **kwargs)
            self.lookups.append(name)
            queue = self.answers[name]
            address = queue.pop(0) if len(queue) > 1 else queue[0]
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sockaddr = (address, port or 0, 0, 0) if family == socket.AF_INET6 else (address, port or 0)
            return [(family, socket.SOCK_STREAM, 6, "", sockaddr)]

        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


async def fetch(tool: WebFetchTool, url: str, tmp_path: Path) -> ToolOutput:
    return await tool.call(tool.validate({"url": url, "prompt": "p"}), ToolContext(cwd=tmp_path))


async def test_a_name_that_resolves_to_a_denied_address_is_denied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Resolver(monkeypatch, intranet_example=["10.0.0.5"], wiki_example=["127.0.0.1"], docs_example=["10.0.0.7"])
    found = rules(allow=["WebFetch"], deny=["WebFetch(domain:10.0.0.5)", "WebFetch(domain:::1)"])
    decision = await decide(tmp_path, found, "https://intranet.example/admin")
    assert isinstance(decision, Deny) and "blocked by the deny rule WebFetch(domain:10.0.0.5)" in decision.message
    decision = await decide(tmp_path, found, "https://wiki.example/")  # ::1 is this machine: so is 127.0.0.1
    assert isinstance(decision, Deny) and "blocked by the deny rule WebFetch(domain:::1)" in decision.message
    assert isinstance(await decide(tmp_path, found, "https://docs.example/"), Allow)
    assert pinned("docs.example") == ("10.0.0.7",) and pinned("intranet.example") is None  # denied: nothing pinned


async def test_the_fetch_connects_to_the_address_the_check_saw_and_asks_no_resolver_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, web: WebServer
) -> None:
    """DNS rebinding: the name answers the check with a harmless address and then with the denied one."""
    resolver = Resolver(monkeypatch, rebind_localhost=["127.0.0.1", "10.0.0.5"])
    web.route("/page", Route("<main><p>served from the checked address</p></main>"))
    url = web.url("/page", host="rebind.localhost")
    found = rules(allow=["WebFetch"], deny=["WebFetch(domain:10.0.0.5)"])
    assert isinstance(await decide(tmp_path, found, url), Allow)
    assert resolver.lookups == ["rebind.localhost"] and pinned("rebind.localhost") == ("127.0.0.1",)
    output = await fetch(WebFetchTool(), url, tmp_path)
    assert not output.is_error, output.content
    assert "served from the checked address" in output.content and web.hits("/page") == 1
    assert resolver.lookups == ["rebind.localhost"]  # the fetch did not resolve it again
    assert web.requests[0].headers["host"] == f"rebind.localhost:{web.port}"  # sent to the address, by its name


async def test_a_same_site_hop_to_a_name_no_check_resolved_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, web: WebServer
) -> None:
    Resolver(monkeypatch, site_localhost=["127.0.0.1"], www_site_localhost=["127.0.0.1"])
    web.route("/new", Route("<p>the www page</p>"))
    old = web.route("/old", Route.redirect(web.url("/new", host="www.site.localhost")))
    url = old.replace("127.0.0.1", "site.localhost")
    assert isinstance(await decide(tmp_path, rules(allow=["WebFetch"], deny=["WebFetch(domain:10.0.0.5)"]), url), Allow)
    output = await fetch(WebFetchTool(), url, tmp_path)
    assert output.content.startswith(f"REDIRECT: {url} redirects (302) to another host: ")
    assert web.hits("/new") == 0


async def test_redirects_compare_normalized_hosts(tmp_path: Path, web: WebServer) -> None:
    web.route("/new", Route("<main><p>the same host, spelled otherwise</p></main>"))
    old = web.route("/old", Route.redirect(web.url("/new", host="127.1")))
    output = await fetch(WebFetchTool(), old, tmp_path)
    assert "the same host, spelled otherwise" in output.content and web.hits("/new") == 1
    elsewhere = web.route("/away", Route.redirect(web.url("/x", host="0x7f000002")))  # 127.0.0.2: another host
    output = await fetch(WebFetchTool(), elsewhere, tmp_path)
    assert output.content.startswith(f"REDIRECT: {elsewhere} redirects (302) to another host: http://127.0.0.2:")
    assert same_site("https://docs.example.com/a", "https://DOCS.example.com./b")
    assert not same_site("https://docs.example.com/a", "https://docs.example.com.evil.io/b")
    assert normalize("http://2130706433:8123/x") == "http://127.0.0.1:8123/x"


@pytest.fixture
def certificate(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for `secure.localhost` (and its key), made by the openssl command."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a test certificate with")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert), "-days",
         "2", "-subj", "/CN=secure.localhost", "-addext", "subjectAltName=DNS:secure.localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


async def test_https_sent_to_the_checked_address_still_verifies_the_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, certificate: tuple[Path, Path]
) -> None:
    """The connection goes to an IP address, and TLS still names the host (SNI) and checks its certificate."""
    Resolver(monkeypatch, secure_localhost=["127.0.0.1"])
    monkeypatch.setenv("SSL_CERT_FILE", str(certificate[0]))  # the test certificate is the only one trusted
    with WebServer(tls=certificate) as web:
        web.route("/doc", Route("<main><p>over TLS, to the address checked</p></main>"))
        url = web.url("/doc", host="secure.localhost")
        assert isinstance(
            await decide(tmp_path, rules(allow=["WebFetch"], deny=["WebFetch(domain:10.0.0.5)"]), url), Allow
        )
        output = await fetch(WebFetchTool(), url, tmp_path)
        assert "over TLS, to the address checked" in output.content, output.content
        assert web.requests[0].headers["host"] == f"secure.localhost:{web.port}"
        wrong = await fetch(WebFetchTool(), web.url("/doc"), tmp_path)  # by its address: the certificate does not fit
        assert wrong.is_error and "CERTIFICATE_VERIFY_FAILED" in wrong.content
