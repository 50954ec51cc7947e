"""Real MCP servers through the adapter, end to end: mcp-server-time (stdio, 2026-07-28 era), server-everything
over stdio and over streamable HTTP (2025-11-25 era), our toolbox fixture over stdio and legacy SSE, and a
tools-only low-level server. Calls go `tool.validate` → `await tool.call(args, ToolContext(...))`, as the loop
runs them; resources, mentions, prompts and the permission path are exercised the same way.

One manager serves the whole module (starting six servers per test would take most of a minute).
"""

from __future__ import annotations

import base64
import json
import re
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from react_agent_mini.abort import AbortSignal
from react_agent_mini.events import ToolFinished
from react_agent_mini.mcp import McpError
from react_agent_mini.mcp.adapter import McpTool
from react_agent_mini.mcp.manager import McpManager
from react_agent_mini.mcp.resources import ListMcpResourcesTool, ReadMcpResourceTool
from react_agent_mini.messages import ToolUseBlock
from react_agent_mini.permissions.policy import Allow, Deny, PermissionPolicy
from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.tools.base import ToolContext, ToolInputError, ToolRegistry
from react_agent_mini.tools.runner import ToolRun, run_tool_calls

from ..fakes.mcp_servers import support
from ..fakes.mcp_servers.toolbox import PNG

pytestmark = pytest.mark.asyncio(loop_scope="module")

PROVIDER_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("trace") / "toolbox.trace"


@pytest.fixture(scope="module")
def everything_remote() -> Iterator[str]:
    command, port, env = support.everything_http()
    with support.http_server(command, port, env):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def toolbox_sse() -> Iterator[str]:
    command, port = support.toolbox_http("sse")
    with support.http_server(command, port):
        yield f"http://127.0.0.1:{port}/sse"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fleet(
    tmp_path_factory: pytest.TempPathFactory, trace_file: Path, everything_remote: str, toolbox_sse: str
) -> AsyncIterator[McpManager]:
    configs = {
        "time": support.time_config(),
        "everything": support.everything_config(),
        "remote": support.remote("remote", everything_remote),
        "toolbox": support.toolbox(env={"TOOLBOX_TRACE": str(trace_file)}),
        "plain": support.stdio("plain", sys.executable, str(support.PLAIN)),
        "legacy-sse": support.remote("legacy-sse", toolbox_sse, "sse"),
    }
    manager = McpManager(configs, log_dir=tmp_path_factory.mktemp("logs"), call_timeout=60)
    manager.start()
    assert await manager.wait_ready(120) == []
    yield manager
    await manager.aclose()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path)


def tool(manager: McpManager, name: str) -> McpTool:
    found = next(t for t in manager.tools() if t.name == name)
    assert isinstance(found, McpTool)
    return found


async def run(manager: McpManager, name: str, ctx: ToolContext, **args: object) -> tuple[str, bool]:
    t = next(t for t in manager.tools() if t.name == name)
    output = await t.call(t.validate(args), ctx)
    return output.content, output.is_error


def traced(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


# ---- connection and naming ----


async def test_every_server_connects_on_its_protocol_era(fleet: McpManager) -> None:
    status = {s.name: s for s in fleet.status()}
    assert {name: s.state for name, s in status.items()} == dict.fromkeys(status, "connected")
    assert status["time"].detail.endswith("protocol 2026-07-28")
    assert status["toolbox"].detail == "toolbox 1.0, protocol 2026-07-28"
    assert status["everything"].detail == "mcp-servers/everything 2.0.0, protocol 2025-11-25"
    assert status["remote"].detail == "mcp-servers/everything 2.0.0, protocol 2025-11-25"
    assert status["plain"].resources is False
    assert status["toolbox"].prompts == ("plan_trip", "summarise")
    assert fleet.instructions()["everything"].startswith("# Everything Server")
    assert "plain" not in fleet.instructions()


async def test_tools_are_named_for_every_provider_and_listed_in_config_order(fleet: McpManager) -> None:
    names = [t.name for t in fleet.tools()]
    assert all(PROVIDER_NAME.match(n) for n in names)
    assert len(names) == len(set(names))
    assert names[:2] == ["mcp__time__get_current_time", "mcp__time__convert_time"]
    assert names[-2:] == ["ListMcpResourcesTool", "ReadMcpResourceTool"]
    assert "mcp__everything__get-sum" in names and "mcp__remote__get-sum" in names
    assert "mcp__legacy-sse__echo" in names and "mcp__plain__shout" in names
    # asking again hands out the very same objects (a session may add late servers between turns)
    assert [id(t) for t in fleet.tools()] == [id(t) for t in fleet.tools()]


async def test_unsafe_long_and_colliding_names_are_cleaned_deterministically(
    fleet: McpManager, ctx: ToolContext
) -> None:
    # "dotted.name" is listed first, so it keeps the plain cleaned name; "dotted_name" gets the suffix
    assert await run(fleet, "mcp__toolbox__dotted_name", ctx) == ("dotted", False)
    assert await run(fleet, "mcp__toolbox__dotted_name_2", ctx) == ("underscored", False)
    long_name = ("mcp__toolbox__" + "t" * 70)[:64]
    assert await run(fleet, long_name, ctx) == ("long", False)
    assert tool(fleet, long_name).tool_name == "t" * 70


async def test_server_schema_goes_to_the_model_as_is(fleet: McpManager) -> None:
    from mcp import Client, StdioServerParameters

    config = support.time_config()
    async with Client(StdioServerParameters(command=config.command, args=list(config.args))) as direct:
        listed = {t.name: t.input_schema for t in (await direct.list_tools()).tools}
    assert tool(fleet, "mcp__time__convert_time").input_schema() == listed["convert_time"]
    assert tool(fleet, "mcp__time__get_current_time").input_schema() == listed["get_current_time"]


async def test_read_only_hint_decides_read_only(fleet: McpManager) -> None:
    assert tool(fleet, "mcp__time__get_current_time").read_only is True
    assert tool(fleet, "mcp__everything__echo").concurrency_safe is True
    assert tool(fleet, "mcp__everything__toggle-simulated-logging").read_only is False
    assert tool(fleet, "mcp__toolbox__write_note").read_only is False
    shout = tool(fleet, "mcp__plain__shout")  # no annotations at all
    assert (shout.read_only, shout.concurrency_safe) == (False, False)


# ---- calls and results ----


async def test_time_server_answers_and_reports_errors(fleet: McpManager, ctx: ToolContext) -> None:
    text, is_error = await run(fleet, "mcp__time__get_current_time", ctx, timezone="Europe/Paris")
    assert not is_error
    assert json.loads(text)["timezone"] == "Europe/Paris"
    text, is_error = await run(fleet, "mcp__time__get_current_time", ctx, timezone="Mars/Olympus")
    assert is_error
    assert "Invalid timezone" in text


async def test_missing_required_argument_is_named_before_any_round_trip(fleet: McpManager) -> None:
    with pytest.raises(ToolInputError, match=r"^timezone: field required$"):
        tool(fleet, "mcp__time__get_current_time").validate({})


@pytest.mark.parametrize("server", ["everything", "remote"])
async def test_everything_over_stdio_and_http(fleet: McpManager, ctx: ToolContext, server: str) -> None:
    assert await run(fleet, f"mcp__{server}__echo", ctx, message="hi") == ("Echo: hi", False)
    text, is_error = await run(fleet, f"mcp__{server}__get-sum", ctx, a=2, b=3)
    assert not is_error and "5" in text


async def test_an_image_is_a_placeholder_line_and_an_image(fleet: McpManager, ctx: ToolContext) -> None:
    t = next(t for t in fleet.tools() if t.name == "mcp__everything__get-tiny-image")
    output = await t.call(t.validate({}), ctx)
    assert not output.is_error
    assert re.search(r"^\[image: image/png, [1-9]\d* bytes\]$", output.content, re.MULTILINE)
    assert "iVBOR" not in output.content  # the base64 never reaches the model as text
    assert [i.media_type for i in output.images] == ["image/png"]
    assert base64.b64decode(output.images[0].data).startswith(b"\x89PNG")
    assert await run(fleet, "mcp__toolbox__picture", ctx) == (f"see below\n[image: image/png, {len(PNG)} bytes]", False)


async def test_embedded_resource_and_resource_links(fleet: McpManager, ctx: ToolContext) -> None:
    text, _ = await run(fleet, "mcp__everything__get-resource-reference", ctx, resourceType="Text", resourceId=1)
    assert "[resource: demo://resource/dynamic/text/1]\nResource 1: This is a plaintext resource" in text
    text, _ = await run(fleet, "mcp__everything__get-resource-links", ctx, count=2)
    assert text.count("[resource link: demo://resource/dynamic/") == 2


async def test_structured_content_is_shown_once(fleet: McpManager, ctx: ToolContext) -> None:
    # the text block already carries the JSON: it is not repeated
    text, _ = await run(fleet, "mcp__everything__get-structured-content", ctx, location="New York")
    assert text.count("temperature") == 1
    # only structured content, no text block: the JSON is the result
    text, is_error = await run(fleet, "mcp__plain__shout", ctx, word="hey")
    assert (json.loads(text), is_error) == ({"shouted": "HEY"}, False)


async def test_is_error_becomes_an_error_result(fleet: McpManager, ctx: ToolContext) -> None:
    assert await run(fleet, "mcp__toolbox__fail", ctx, message="server said no") == (
        "Error executing tool fail: server said no",
        True,
    )


async def test_legacy_sse_transport(fleet: McpManager, ctx: ToolContext) -> None:
    assert await run(fleet, "mcp__legacy-sse__echo", ctx, message="over sse") == ("echo: over sse", False)


async def test_concurrent_calls_share_one_connection(fleet: McpManager, ctx: ToolContext) -> None:
    import asyncio

    results = await asyncio.gather(*(run(fleet, "mcp__toolbox__echo", ctx, message=str(i)) for i in range(10)))
    assert results == [(f"echo: {i}", False) for i in range(10)]


# ---- permissions: MCP tools go through the same policy as built-ins ----


async def test_write_tool_is_denied_headless_and_never_called(
    fleet: McpManager, ctx: ToolContext, trace_file: Path
) -> None:
    registry = ToolRegistry(fleet.tools())
    policy = PermissionPolicy(ctx.cwd)  # no asker: headless
    uses = [
        ToolUseBlock("t1", "mcp__toolbox__echo", {"message": "allowed"}),
        ToolUseBlock("t2", "mcp__toolbox__write_note", {"text": "must not happen"}),
    ]
    run_ = ToolRun(registry, ctx, policy, AbortSignal())
    results = [e.result async for e in run_tool_calls(uses, run_) if isinstance(e, ToolFinished)]
    assert (results[0].content, results[0].is_error) == ("echo: allowed", False)
    assert results[1].is_error
    assert "mcp__toolbox__write_note" in results[1].content
    assert "write_note must not happen" not in traced(trace_file)


async def test_an_allow_rule_lets_the_write_tool_run(fleet: McpManager, ctx: ToolContext, trace_file: Path) -> None:
    rules = RuleSet()
    rules.add("allow", "mcp__toolbox__write_note", "session")
    policy = PermissionPolicy(ctx.cwd, rules=rules)
    write_note = tool(fleet, "mcp__toolbox__write_note")
    assert isinstance(await policy(write_note, {"text": "ok"}), Allow)
    assert isinstance(await PermissionPolicy(ctx.cwd)(write_note, {"text": "ok"}), Deny)
    output = await write_note.call(write_note.validate({"text": "approved"}), ctx)
    assert (output.content, output.is_error) == ("noted: approved", False)
    assert "write_note approved" in traced(trace_file)


# ---- resources ----


async def test_list_resources_of_every_server_with_templates(fleet: McpManager, ctx: ToolContext) -> None:
    text, is_error = await run(fleet, "ListMcpResourcesTool", ctx)
    assert not is_error
    entries = json.loads(text)
    assert {"server": "toolbox", "uri": "notes://handbook", "name": "handbook", "mimeType": "text/plain"}.items() <= (
        next(e for e in entries if e.get("uri") == "notes://handbook").items()
    )
    assert any(e.get("uriTemplate") == "notes://dynamic/{item}" and e["server"] == "toolbox" for e in entries)
    assert any(e.get("uri", "").startswith("demo://resource/static/document/") for e in entries)
    assert {e["server"] for e in entries} >= {"toolbox", "everything", "remote"}
    assert "plain" not in {e["server"] for e in entries}


async def test_list_resources_of_one_server_and_errors(fleet: McpManager, ctx: ToolContext) -> None:
    text, _ = await run(fleet, "ListMcpResourcesTool", ctx, server="toolbox")
    assert {e["server"] for e in json.loads(text)} == {"toolbox"}
    text, is_error = await run(fleet, "ListMcpResourcesTool", ctx, server="missing")
    assert is_error and text.startswith('Server "missing" not found. Available servers: time, everything, remote')
    text, is_error = await run(fleet, "ListMcpResourcesTool", ctx, server="plain")
    assert is_error and text == 'Server "plain" does not support resources (or is not connected).'


async def test_read_resource_text_blob_template_and_missing(fleet: McpManager, ctx: ToolContext) -> None:
    read = "ReadMcpResourceTool"
    assert await run(fleet, read, ctx, server="toolbox", uri="notes://handbook") == (
        "Travel handbook: economy class first.",
        False,
    )
    assert await run(fleet, read, ctx, server="toolbox", uri="notes://logo") == (
        f"[binary content omitted: image/png, {len(PNG)} bytes]",
        False,
    )
    assert await run(fleet, read, ctx, server="toolbox", uri="notes://dynamic/42") == ("dynamic item 42", False)
    text, is_error = await run(fleet, read, ctx, server="everything", uri="demo://resource/static/document/features.md")
    assert not is_error and "Features" in text
    text, is_error = await run(fleet, read, ctx, server="toolbox", uri="notes://nothing-here")
    assert is_error and text.startswith("Reading notes://nothing-here from the MCP server toolbox failed: ")


async def test_resource_tools_are_read_only(fleet: McpManager) -> None:
    tools = {t.name: t for t in fleet.tools()}
    assert isinstance(tools["ListMcpResourcesTool"], ListMcpResourcesTool)
    assert isinstance(tools["ReadMcpResourceTool"], ReadMcpResourceTool)
    assert all(
        tools[n].read_only and tools[n].concurrency_safe for n in ("ListMcpResourcesTool", "ReadMcpResourceTool")
    )


# ---- mentions ----


async def test_mention_reads_exactly_that_resource(fleet: McpManager, trace_file: Path) -> None:
    before = len(traced(trace_file))
    messages, warnings = await fleet.resolve_mentions(
        "First read @toolbox:notes://handbook, then @toolbox:notes://handbook again; plan the trip."
    )
    assert warnings == []
    assert len(messages) == 1
    assert messages[0].meta and messages[0].role == "user"
    assert messages[0].text == (
        'The user attached the MCP resource notes://handbook from the server "toolbox":\n\n'
        "Travel handbook: economy class first."
    )
    assert traced(trace_file)[before:] == ["read notes://handbook"]  # nothing else read, nothing listed wholesale


async def test_mentions_of_several_servers_keep_their_order(fleet: McpManager) -> None:
    messages, warnings = await fleet.resolve_mentions(
        "@everything:demo://resource/static/document/features.md and @toolbox:notes://logo"
    )
    assert warnings == []
    assert "demo://resource/static/document/features.md" in messages[0].text
    assert messages[1].text.endswith(f"[binary content omitted: image/png, {len(PNG)} bytes]")


async def test_mentions_that_cannot_be_read_warn_and_others_are_left_alone(fleet: McpManager) -> None:
    messages, warnings = await fleet.resolve_mentions(
        "mail me@example.com, log in as @admin:secret, see @nobody:docs://x, @plain:res://a and @toolbox:notes://gone"
    )
    assert messages == []
    assert warnings[0] == "@nobody:docs://x: there is no MCP server named 'nobody'"
    assert warnings[1] == "@plain:res://a: the MCP server plain is not connected or has no resources"
    assert warnings[2].startswith("@toolbox:notes://gone: Reading notes://gone from the MCP server toolbox failed")
    assert len(warnings) == 3


# ---- prompts ----


async def test_prompts_are_listed_with_their_arguments(fleet: McpManager) -> None:
    prompts = {p.command: p for p in fleet.prompts()}
    assert prompts["toolbox:plan_trip"].usage == "/toolbox:plan_trip <city> [days]"
    assert prompts["everything:args-prompt"].usage == "/everything:args-prompt <city> [state]"
    assert "remote:simple-prompt" in prompts
    assert not any(p.server in ("time", "plain") for p in prompts.values())


async def test_run_prompt_fills_arguments_in_order(fleet: McpManager) -> None:
    messages = await fleet.run_prompt("toolbox", "plan_trip", "Paris 3")
    assert [(m.role, m.meta, m.text) for m in messages] == [("user", True, "Plan a trip to Paris for 3 day(s).")]
    messages = await fleet.run_prompt("toolbox", "plan_trip", '"New York"')
    assert messages[0].text == "Plan a trip to New York for 1 day(s)."
    # extra words go to the last argument: a one-argument prompt takes free text
    messages = await fleet.run_prompt("toolbox", "summarise", "this whole sentence, please")
    assert messages[0].text == "Summarise: this whole sentence, please"


async def test_prompt_errors_are_one_clear_line(fleet: McpManager) -> None:
    with pytest.raises(
        McpError, match=r"^/toolbox:plan_trip needs city \(usage: /toolbox:plan_trip <city> \[days\]\)$"
    ):
        await fleet.run_prompt("toolbox", "plan_trip", "")
    with pytest.raises(McpError, match=r"^No MCP prompt /toolbox:nope\. Available: /everything:simple-prompt, "):
        await fleet.run_prompt("toolbox", "nope", "")


async def test_everything_prompts_with_embedded_resources(fleet: McpManager) -> None:
    messages = await fleet.run_prompt("everything", "args-prompt", "Lyon")
    assert "Lyon" in messages[0].text
    messages = await fleet.run_prompt("remote", "resource-prompt", "Text 1")
    assert any(m.text.startswith("[resource: demo://resource/dynamic/text/1]") for m in messages)


async def test_server_logs_hold_stderr(fleet: McpManager) -> None:
    status = {s.name: s for s in fleet.status()}
    log = Path(status["everything"].log_path).read_text()
    assert "starting MCP server everything" in log
    assert status["remote"].log_path == status["legacy-sse"].log_path == ""  # remote servers have no stderr
