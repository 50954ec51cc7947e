"""The options every server front end takes (`ram acp`, `ram mcp serve`): which provider and model, the offline
demo model, the permission mode sessions start in, and the model calls per prompt — read from the provider
registry and the permission-mode table, so a provider or mode added there is offered here too."""

from __future__ import annotations

import argparse

from ..permission_modes import PERMISSION_MODES
from ..provider_registry import flag_choices


def add_session_flags(parser: argparse.ArgumentParser) -> None:
    """`--provider`, `--model`, `--mock`, `--permission-mode`, `--max-turns`."""
    parser.add_argument("--provider", choices=flag_choices(), help="model API (default: whichever key is set)")
    parser.add_argument("--model", help="model id (overrides OPENAI_MODEL / ANTHROPIC_MODEL)")
    parser.add_argument("--mock", action="store_true", help="offline scripted demo model: no key, no network")
    parser.add_argument("--permission-mode", choices=PERMISSION_MODES, help="the mode sessions start in")
    parser.add_argument("--max-turns", type=int, default=20, metavar="N", help="model calls per prompt (default 20)")


def parse_session_flags(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """`argv` parsed; a usage error (exit 2) for `--max-turns` below 1."""
    args = parser.parse_args(argv)
    if args.max_turns < 1:
        parser.error("--max-turns must be at least 1")
    return args
