"""`ram usage`: the command line (`EXAMPLES` below, which `ram usage --help` shows too)."""

from __future__ import annotations

import argparse
import datetime
import os
import sys
from typing import NoReturn

from .. import transcript
from .totals import BY

EXAMPLES = """examples:
  ram usage                       every saved session, one row per day (local time)
  ram usage --by project          one row per workspace (also: --by model, --by session)
  ram usage --since 2025-06-01    from that day on (--until: up to and including that day)
  ram usage --json                the same numbers, as one JSON object

Counted: every model call the sessions under $XDG_DATA_HOME/react-agent-mini/sessions/ made (default
~/.local/share/...), their subagents' and summaries' included. Cost is at list price (pricing.py); a model
without a known price counts its tokens only, and says so. Cached: cache reads over everything the models read."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (ram usage --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ram usage",
        description="Tokens, prefix-cache share and cost of the saved sessions, by day, project, model or session.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--by", choices=BY, default="day", help="one row per day (default), project, model or session")
    parser.add_argument("--since", type=_day, metavar="YYYY-MM-DD", help="from this day on (local time)")
    parser.add_argument("--until", type=_day, metavar="YYYY-MM-DD", help="up to and including this day")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    return parser


def _day(text: str) -> str:
    """`YYYY-MM-DD` (or `YYYYMMDD`, as ccusage writes it) as `YYYY-MM-DD`."""
    raw = text.strip()
    for form in ("%Y-%m-%d", "%Y%m%d"):
        try:
            return datetime.datetime.strptime(raw, form).date().isoformat()
        except ValueError:
            continue
    raise argparse.ArgumentTypeError(f"not a day: {text!r} (give it as YYYY-MM-DD)")


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    since, until = args.since or "", args.until or ""
    if since and until and since > until:
        print(f"error: --since {since} is after --until {until}", file=sys.stderr)
        return 2
    from .collect import collect
    from .report import as_json, as_table, warning_lines

    try:
        found = collect(transcript.data_dir() / "sessions", args.by, since, until)
        for line in warning_lines(found):
            print(line, file=sys.stderr)
        text = as_json(found, since, until) + "\n" if args.json else as_table(found, since, until)
        sys.stdout.write(text)
        sys.stdout.flush()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `ram usage | head`: the reader has gone; say nothing more
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return 0
