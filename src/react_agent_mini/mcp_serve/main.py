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

from ..kit.flags import add_session_flags, parse_session_flags

if TYPE_CHECKING:
    from ..app import SessionOptions
    from ..config import ProviderConfig


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ram mcp serve", description="Serve ram as an MCP server on stdin/stdout (tools: ram, ram_reply)."
    )
    add_session_flags(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    from ..app import SessionOptions
    from ..config import ConfigError, resolve_provider
    from ..permissions.configured import PermissionOptions

    args = parse_session_flags(build_parser(), list(argv))
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
