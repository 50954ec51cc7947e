"""`ram mcp serve [--provider P] [--model M] [--mock] [--permission-mode MODE] [--max-turns N]`: serve MCP on
stdin/stdout until the client closes it. Setup problems are one line on stderr (exit 2)."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..app import SessionOptions
    from ..config import ProviderConfig

MODES = ("default", "acceptEdits", "plan", "bypassPermissions")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ram mcp serve", description="Serve ram as an MCP server on stdin/stdout (tools: ram, ram_reply)."
    )
    parser.add_argument("--provider", choices=["openai", "anthropic"], help="model API (default: whichever key is set)")
    parser.add_argument("--model", help="model id (overrides OPENAI_MODEL / ANTHROPIC_MODEL)")
    parser.add_argument("--mock", action="store_true", help="offline scripted demo model: no key, no network")
    parser.add_argument("--permission-mode", choices=MODES, help="the mode sessions start in")
    parser.add_argument("--max-turns", type=int, default=20, metavar="N", help="model calls per prompt (default 20)")
    return parser


def main(argv: Sequence[str]) -> int:
    from ..app import SessionOptions
    from ..config import ConfigError, resolve_provider
    from ..permissions.configured import PermissionOptions

    parser = build_parser()
    args = parser.parse_args(list(argv))
    if args.max_turns < 1:
        parser.error("--max-turns must be at least 1")
    try:
        config = resolve_provider(os.environ, provider=args.provider, model=args.model, mock=args.mock)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    options = SessionOptions(Path.cwd(), max_turns=args.max_turns, permissions=PermissionOptions(args.permission_mode))
    try:
        asyncio.run(_serve(config, options))
    except KeyboardInterrupt:
        return 130
    return 0


async def _serve(config: ProviderConfig, options: SessionOptions) -> None:
    from .server import Sessions, build_server

    sessions = Sessions(config, options)
    try:
        await build_server(sessions).run_stdio_async()
    finally:
        await sessions.aclose()
