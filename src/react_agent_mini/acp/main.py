"""`ram acp [--provider P] [--model M] [--mock] [--permission-mode MODE] [--max-turns N]`: serve the Agent Client
Protocol on stdin and stdout until stdin ends.

stdout carries the protocol and nothing else. Its descriptors are claimed first (`wire.claim_stdio`), so stray
output goes to stderr. So do ram's warnings and the `acp` package's log, one line per record (no tracebacks). The
exit code is 0 when the client closes stdin, and 143, 130 or 129 after SIGTERM, SIGINT or SIGHUP. In every case
the turns stop and the sessions (MCP servers, transcripts) are closed first. The provider and its key come from the
environment, as for `ram`. A missing key is reported when a session is opened, not at start (see `agent`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from typing import cast

from ..kit.flags import add_session_flags, parse_session_flags
from ..permission_modes import PERMISSION_MODES
from .wire import ProtocolFds, claim_stdio

MODES = PERMISSION_MODES
"""The permission modes a session may start in (`options.MODES` has their names; it loads the protocol's schema)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ram acp",
        description="Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, Neovim, JetBrains, Emacs).",
        epilog='In Zed\'s settings.json: {"agent_servers": {"ram": {"command": "ram", "args": ["acp"]}}}',
    )
    add_session_flags(parser)
    return parser


def main(argv: Sequence[str]) -> int:
    args = parse_session_flags(build_parser(), list(argv))
    fds = claim_stdio()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine("ram acp: %(levelname)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    try:
        return asyncio.run(_serve(fds, args))
    except KeyboardInterrupt:
        return 130


class OneLine(logging.Formatter):
    """A log record as one line: an exception the `acp` package logs (say, a handler that failed) is named with
    its message, not shown as a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            error = record.exc_info[1]
            text += f": {type(error).__name__}: {' '.join(str(error).split())}"
        return self._style.format(logging.makeLogRecord({**record.__dict__, "msg": text, "args": None}))


def complain(text: str) -> None:
    """One line on stderr (control characters made visible)."""
    from ..terminal_text import visible

    try:
        sys.stderr.write(visible(text) + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


async def _serve(fds: ProtocolFds, args: argparse.Namespace) -> int:
    from acp import Agent, run_agent

    from ..config import ProviderConfig, resolve_provider
    from ..stop_signals import stop_on_signals, was_stopped
    from .agent import RamAgent
    from .session import SessionSetup
    from .wire import LineTransport

    def resolve() -> ProviderConfig:
        return resolve_provider(provider=args.provider, model=args.model, mock=args.mock)

    def setup(config: ProviderConfig) -> SessionSetup:
        return SessionSetup(config, complain, mode=args.permission_mode, max_turns=args.max_turns)

    agent = RamAgent(resolve, setup)
    with stop_on_signals() as stopped:
        try:
            # not every method of the protocol is here: the package answers the others with Method not found
            await run_agent(cast(Agent, agent), LineTransport(fds, complain))
        except asyncio.CancelledError:
            if not was_stopped(stopped):
                raise
        finally:
            await agent.aclose()
    return stopped.exit_code or 0
