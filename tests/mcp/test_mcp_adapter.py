"""The pure parts of the MCP client: public tool names, mention parsing, prompt argument binding, result
rendering of content kinds the real test servers do not produce. (Everything with I/O is in the other
test_mcp_* files, against real servers.)"""

from __future__ import annotations

import base64
import re

import pytest

from react_agent_mini.mcp import McpError
from react_agent_mini.mcp.adapter import ToolNamer, cap_text, clean_name, public_tool_name, render_tool_result
from react_agent_mini.mcp.prompts import PromptArgument, PromptInfo, bind_arguments
from react_agent_mini.mcp.resources import parse_mentions
from react_agent_mini.tools.base import ToolOutput

PROVIDER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("demo", "foo", "mcp__demo__foo"),
        ("my.server", "foo.bar", "mcp__my_server__foo_bar"),
        ("git hub", "create issue/now", "mcp__git_hub__create_issue_now"),
        ("ünï", "tööl", "mcp___n___t__l"),
        ("s", "x" * 100, ("mcp__s__" + "x" * 100)[:64]),
    ],
)
def test_public_names_fit_every_provider(server: str, tool: str, expected: str) -> None:
    name = public_tool_name(server, tool)
    assert name == expected
    assert PROVIDER_NAME.match(name)


def test_clean_name_never_returns_an_empty_part() -> None:
    assert clean_name("") == "_"
    assert clean_name("a-b_c9") == "a-b_c9"


def test_collisions_get_suffixes_in_the_order_names_are_asked_for() -> None:
    namer = ToolNamer(taken=["mcp__a__x_2"])
    assert namer.name("a", "x.y") == "mcp__a__x_y"
    assert namer.name("a", "x_y") == "mcp__a__x_y_2"
    assert namer.name("a.", "x_y") == "mcp__a___x_y"
    assert namer.name("a", "x y") == "mcp__a__x_y_3"
    assert namer.name("a", "x.y") == "mcp__a__x_y"  # the same answer every time
    # a long name that collides keeps within 64 characters
    long_a, long_b = namer.name("s", "t" * 80), namer.name("s", "t" * 81)
    assert (len(long_a), len(long_b)) == (64, 64)
    assert long_b == long_a[:62] + "_2"
    # the same configuration always yields the same names
    again = ToolNamer(taken=["mcp__a__x_2"])
    assert [again.name(*k) for k in [("a", "x.y"), ("a", "x_y"), ("a.", "x_y"), ("a", "x y")]] == [
        "mcp__a__x_y",
        "mcp__a__x_y_2",
        "mcp__a___x_y",
        "mcp__a__x_y_3",
    ]


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ("先阅读 @tour:docs://handbook ，再给出日程草案。", [("tour", "docs://handbook")]),
        ("先阅读 @tour:docs://handbook，再给出日程草案。", [("tour", "docs://handbook")]),
        (
            "email@x.com @tour:docs://a @tour:docs://a @other:res://b",
            [("tour", "docs://a"), ("other", "res://b")],
        ),
        ("@srv:file:///tmp/a.txt.", [("srv", "file:///tmp/a.txt")]),
        ("see (@srv:notes://x) and @srv:", []),
        ("@:x://y @srv x://y", []),
        ("@srv:notes://x\n@srv:notes://y", [("srv", "notes://x"), ("srv", "notes://y")]),
    ],
)
def test_mentions(text: str, mentions: list[tuple[str, str]]) -> None:
    assert parse_mentions(text) == mentions


TRIP = PromptInfo(
    "tour", "plan_trip", arguments=(PromptArgument("city", required=True), PromptArgument("days", required=False))
)


@pytest.mark.parametrize(
    ("line", "bound"),
    [
        ("Tokyo 3", {"city": "Tokyo", "days": "3"}),
        ("Tokyo", {"city": "Tokyo"}),
        ('"São Paulo" 2', {"city": "São Paulo", "days": "2"}),
        ("Tokyo 3 days please", {"city": "Tokyo", "days": "3 days please"}),
        ("it's Rome", {"city": "it's", "days": "Rome"}),  # an unbalanced quote: plain words
    ],
)
def test_prompt_arguments(line: str, bound: dict[str, str]) -> None:
    assert bind_arguments(TRIP, line) == bound


def test_prompt_without_arguments_ignores_words_and_missing_ones_are_named() -> None:
    assert bind_arguments(PromptInfo("s", "p"), "whatever") == {}
    with pytest.raises(McpError, match=r"^/tour:plan_trip needs city \(usage: /tour:plan_trip <city> \[days\]\)$"):
        bind_arguments(TRIP, "  ")


def test_cap_text() -> None:
    assert cap_text("abc", 3) == "abc"
    assert cap_text("abcd", 3) == "abc\n\n[output truncated: the first 3 of 4 characters are shown]"


def test_rendering_of_audio_empty_and_bare_errors() -> None:
    import mcp_types

    audio = base64.b64encode(b"\0" * 10).decode()
    result = mcp_types.CallToolResult(content=[mcp_types.AudioContent(data=audio, mime_type="audio/wav")])
    assert render_tool_result(result) == ToolOutput("[audio: audio/wav, 10 bytes]")
    assert render_tool_result(mcp_types.CallToolResult(content=[])) == ToolOutput("(no content)")
    assert render_tool_result(mcp_types.CallToolResult(content=[], is_error=True)) == ToolOutput(
        "The MCP tool reported an error without details.", is_error=True
    )
