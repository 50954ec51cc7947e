"""Permissions for the web tools: `WebFetch(domain:…)` and `WebSearch` rules, asking, and what "always" records.

WebFetch and WebSearch change no file, but they reach the network: they are asked for unless a rule allows them,
whatever ALLOW_WRITE or acceptEdits say."""

from __future__ import annotations

from pathlib import Path

import pytest

from react_agent_mini.permissions.policy import (
    Allow,
    Answer,
    Deny,
    PermissionPolicy,
    PermissionRequest,
    allow_read_only,
)
from react_agent_mini.permissions.rules import RuleError, RuleSet, parse_rule
from react_agent_mini.web.fetch_tool import WebFetchTool


class Asker:
    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Answer:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else "no"


def ruleset(**lists: list[str]) -> RuleSet:
    rules = RuleSet()
    for kind, texts in lists.items():
        for text in texts:
            assert rules.add(kind, text, "settings.json") is None  # type: ignore[arg-type]
    return rules


FETCH = WebFetchTool()


def fetch_args(url: str) -> dict[str, str]:
    return {"url": url, "prompt": "read it"}


@pytest.mark.parametrize(
    ("rule", "url", "allowed"),
    [
        ("WebFetch(domain:docs.example.com)", "https://docs.example.com/a", True),
        ("WebFetch(domain:docs.example.com)", "http://DOCS.example.com./a", True),
        ("WebFetch(domain:docs.example.com)", "https://api.docs.example.com/", False),  # allow: that host only
        ("WebFetch(domain:docs.example.com)", "https://example.com/", False),
        ("WebFetch(domain:docs.example.com)", "https://docs.example.com.evil.io/", False),
        ("WebFetch(domain:*.example.com)", "https://api.example.com/", True),
        ("WebFetch(domain:*.example.com)", "https://a.b.example.com/", True),
        ("WebFetch(domain:*.example.com)", "https://example.com/", False),
        ("WebFetch(domain:*)", "https://anything.io/", True),
        ("WebFetch", "https://anything.io/", True),
        ("WebFetch(domain:127.0.0.1)", "http://127.0.0.1:8123/docs", True),
    ],
)
async def test_allow_rules_name_hosts(tmp_path: Path, rule: str, url: str, allowed: bool) -> None:
    policy = PermissionPolicy(tmp_path, rules=ruleset(allow=[rule]))
    decision = await policy.decide(FETCH, fetch_args(url))
    assert isinstance(decision, Allow) is allowed


@pytest.mark.parametrize(
    ("url", "denied"),
    [
        ("https://example.com/x", True),
        ("https://api.example.com/x", True),  # deny and ask rules cover the hosts below
        ("https://EXAMPLE.com./x", True),
        ("https://notexample.com/x", False),
        ("https://example.org/x", False),
    ],
)
async def test_a_deny_rule_blocks_the_host_and_those_below_even_when_allowed(
    tmp_path: Path, url: str, denied: bool
) -> None:
    rules = ruleset(allow=["WebFetch"], deny=["WebFetch(domain:example.com)"])
    decision = await PermissionPolicy(tmp_path, "bypassPermissions", rules).decide(FETCH, fetch_args(url))
    assert isinstance(decision, Deny) is denied
    if denied:
        assert (
            isinstance(decision, Deny) and "blocked by the deny rule WebFetch(domain:example.com)" in decision.message
        )


async def test_an_ask_rule_asks_even_when_allowed(tmp_path: Path) -> None:
    asker = Asker("yes")
    rules = ruleset(allow=["WebFetch(domain:docs.example.com)"], ask=["WebFetch(domain:example.com)"])
    decision = await PermissionPolicy(tmp_path, rules=rules, asker=asker).decide(
        FETCH, fetch_args("https://docs.example.com/")
    )
    assert isinstance(decision, Allow) and len(asker.asked) == 1
    assert "the ask rule WebFetch(domain:example.com)" in asker.asked[0].reason


async def test_without_a_rule_a_fetch_is_asked_for_and_always_records_the_host(tmp_path: Path) -> None:
    asker = Asker("always")
    policy = PermissionPolicy(tmp_path, asker=asker)
    assert isinstance(await policy.decide(FETCH, fetch_args("http://docs.example.com/a")), Allow)
    request = asker.asked[0]
    assert request.summary == "Fetch https://docs.example.com/a" and request.reason == "it reaches the network"
    assert request.always_rules == ("WebFetch(domain:docs.example.com)",)
    assert policy.session_rules() == ["WebFetch(domain:docs.example.com)"]
    assert isinstance(await policy.decide(FETCH, fetch_args("https://docs.example.com/b")), Allow)
    assert len(asker.asked) == 1  # the recorded rule allowed the second one
    await policy.decide(FETCH, fetch_args("https://other.example.com/"))
    assert len(asker.asked) == 2


@pytest.mark.parametrize("mode", ["default", "acceptEdits"])
async def test_headless_denies_a_fetch_with_the_rule_that_would_allow_it(tmp_path: Path, mode: str) -> None:
    policy = PermissionPolicy(tmp_path, mode, allow_write=True)  # type: ignore[arg-type]
    decision = await policy.decide(FETCH, fetch_args("https://docs.example.com/a"))
    assert isinstance(decision, Deny)
    assert decision.message == (
        "Permission denied: Fetch https://docs.example.com/a needs approval (it reaches the network), and headless "
        'mode cannot ask. To allow it, pass --allowed-tools "WebFetch(domain:docs.example.com)", or add an allow '
        "rule to .agents/settings.json."
    )


async def test_plan_mode_asks_for_a_fetch_and_bypass_allows_it(tmp_path: Path) -> None:
    asker = Asker("yes")
    assert isinstance(
        await PermissionPolicy(tmp_path, "plan", asker=asker).decide(FETCH, fetch_args("https://a.io")), Allow
    )
    assert len(asker.asked) == 1
    bypass = PermissionPolicy(tmp_path, "bypassPermissions")
    assert isinstance(await bypass.decide(FETCH, fetch_args("https://a.io")), Allow)


async def test_sessions_without_a_policy_do_not_fetch(tmp_path: Path) -> None:
    assert isinstance(await allow_read_only(FETCH, fetch_args("https://a.io")), Deny)


def test_domain_rule_syntax() -> None:
    assert parse_rule("WebFetch(domain:Docs.Example.com)").specifier == "domain:Docs.Example.com"
    for bad in ("WebFetch(example.com)", "WebFetch(domain:)", "WebFetch(domain:https://x.io)",
                "WebFetch(domain:x.io:8080)", "WebFetch(domain:a*.io)", "WebSearch(foo)"):  # fmt: skip
        with pytest.raises(RuleError):
            parse_rule(bad)
    assert parse_rule("WebFetch(domain:::1)").specifier == "domain:::1"
