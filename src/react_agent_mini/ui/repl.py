"""A minimal line-based interactive loop, until the full REPL (prompt_toolkit + rich) lands.

Type a task, watch the answer stream; `/clear`, `/help`, `/exit`. Ctrl+C during a turn interrupts it and the
conversation goes on; Ctrl+C twice within a second at the prompt, or Ctrl+D, exits.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from ..app import McpAttachment, PermissionOptions, build_session
from ..config import ProviderConfig
from ..events import Compacted, Terminal
from ..headless import interrupt_aborts_turn
from ..messages import Message
from ..output import RunSummary, TextRenderer
from ..permissions.policy import Answer, PermissionRequest
from ..session import Session

HELP = """commands:
  /help              this help
  /status            model, context use, tokens so far
  /compact [focus]   summarise the older conversation now (your messages are kept word for word)
  /<server>:<prompt> run an MCP server's prompt; @<server>:<uri> in a message attaches that resource
  /clear             forget the conversation (the system prompt stays)
  /exit, /quit       leave (Ctrl+D works too)"""


async def _start(mcp: McpAttachment) -> None:
    mcp.start()


def status_line(session: Session) -> str:
    """`ctx ~12% · 3,400 in / 210 out tokens` after each turn."""
    reading = session.context_reading()
    usage = session.totals.usage
    return f"ctx ~{reading.percent}% · {usage.total_input_tokens:,} in / {usage.output_tokens:,} out tokens"


def status_report(session: Session, model: str) -> str:
    reading = session.context_reading()
    usage = session.totals.usage
    return "\n".join(
        [
            f"model: {model}",
            f"context: ~{reading.tokens:,} of {reading.window:,} tokens (~{reading.percent}%)",
            f"tokens so far: {usage.input_tokens:,} input, {usage.cache_read_input_tokens:,} from cache, "
            f"{usage.cache_creation_input_tokens:,} written to cache, {usage.output_tokens:,} output",
            f"model calls: {session.totals.model_calls}; messages: {len(session.messages)}",
        ]
    )


async def _turn(
    session: Session, text: str, renderer: TextRenderer, mcp: McpAttachment, inject: Sequence[Message] = ()
) -> None:
    for warning in await mcp.join(session.tools):
        print(f"warning: {warning}", file=sys.stderr)
    attached, warnings = await mcp.mentions(text)
    for warning in warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if attached:
        print(f"(attached {len(attached)} MCP resource(s))")
    with interrupt_aborts_turn(session):
        async for event in session.run_turn(text, inject_before=[*attached, *inject]):
            renderer.event(event)
            if isinstance(event, Terminal) and event.reason != "completed":
                renderer.finish(event, RunSummary(session.session_id, ""))
    print(f"\x1b[2m{status_line(session)}\x1b[0m" if sys.stdout.isatty() else status_line(session))


async def _mcp_prompt(session: Session, renderer: TextRenderer, mcp: McpAttachment, line: str) -> bool:
    """`/server:prompt args`: run an MCP prompt and send its messages; False when no such prompt exists."""
    command, _, args = line[1:].partition(" ")
    server, _, prompt = command.partition(":")
    if mcp.manager is None or not any(p.command == command for p in mcp.manager.prompts()):
        return False
    try:
        messages = await mcp.manager.run_prompt(server, prompt, args.strip())
    except Exception as exc:  # an MCP failure is one line, never the end of the session
        print(f"MCP prompt failed: {exc}")
        return True
    await _turn(session, "", renderer, mcp, messages)
    return True


async def _compact(session: Session, focus: str) -> None:
    result = await session.compact_now(focus)
    print(result.notice if isinstance(result, Compacted) else result)


async def ask_in_terminal(request: PermissionRequest) -> Answer:
    """Show exactly what will happen and take y (once), a (always, scoped) or N."""
    sys.stdout.write(f"\n{'! outside the workspace: ' if request.outside_workspace else ''}{request.summary}\n")
    sys.stdout.write(f"  needs permission: {request.reason}\n")
    if request.always_rules:
        sys.stdout.write(f"  a = always allow {request.always_rule} for this session\n")
    sys.stdout.flush()
    line = await asyncio.to_thread(input, "Allow? [y/a/N] ")
    answer = line.strip().lower()
    if answer in ("y", "yes"):
        return "yes"
    if answer in ("a", "always"):
        return "always" if request.always_rules else "yes"
    return "no"


def run_repl(
    config: ProviderConfig,
    *,
    max_turns: int = 20,
    permissions: PermissionOptions | None = None,
    resume: Path | None = None,
) -> int:
    with asyncio.Runner() as runner:
        built = build_session(
            config,
            cwd=Path.cwd(),
            max_turns=max_turns,
            permissions=permissions,
            asker=ask_in_terminal,
            mock_chunk_delay=0.01,
            resume=resume,
        )
        session, provider = built.session, built.provider
        runner.run(_start(built.mcp))
        for warning in built.warnings:
            print(f"warning: {warning}", file=sys.stderr)

        def describe(use):  # type: ignore[no-untyped-def]
            tool = session.tools.get(use.name)
            return tool.describe_call(use.input) if tool else ""

        renderer = TextRenderer(sys.stdout, sys.stderr, describe)
        print(f"react-agent-mini · {provider.name}:{provider.model} · /help for commands, Ctrl+D to exit")
        last_interrupt = 0.0
        try:
            while True:
                try:
                    line = input("> ")
                except EOFError:
                    print()
                    return 0
                except KeyboardInterrupt:
                    now = time.monotonic()
                    if now - last_interrupt < 1.0:
                        print()
                        return 130
                    last_interrupt = now
                    print("\n(press Ctrl+C again to exit)")
                    continue
                text = line.strip()
                if not text:
                    continue
                if text in ("/exit", "/quit"):
                    return 0
                if text == "/clear":
                    session.clear()
                    print("conversation cleared")
                    continue
                if text == "/help":
                    print(HELP)
                    continue
                if text == "/status":
                    print(status_report(session, f"{provider.name}:{provider.model}"))
                    continue
                if text == "/compact" or text.startswith("/compact "):
                    runner.run(_compact(session, text.removeprefix("/compact").strip()))
                    continue
                if ":" in text.split()[0] and runner.run(_mcp_prompt(session, renderer, built.mcp, text)):
                    continue
                if text.startswith("/"):
                    print(f"unknown command {text.split()[0]}; /help lists the commands")
                    continue
                runner.run(_turn(session, line, renderer, built.mcp))
        finally:
            runner.run(built.mcp.aclose())
            runner.run(provider.aclose())
            built.recorder.close()
