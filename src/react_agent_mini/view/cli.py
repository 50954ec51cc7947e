"""`ram view`: the command line (`EXAMPLES` below, which `ram view --help` shows too)."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import NoReturn

from .. import transcript
from ..terminal_text import visible

EXAMPLES = """examples:
  ram view                        this directory's newest session, into ram-<id>.html here
  ram view 3f2a                   a session of this directory by its id or the start of it
  ram view path/to/session.jsonl  any transcript (a ram batch task's, one mailed to you)
  ram view out/                   a ram batch --out folder: out/view.html, a row per task linking to
                                  out/view-tasks/<task>.html
  ram view 3f2a -o report.html    choose the file (a batch's task pages go in report-tasks/ beside it)

The page is one file that loads nothing (no script, no font, no request: its Content-Security-Policy forbids it),
so it opens offline and from a mail attachment. It shows the conversation (tool calls folded, edits as diffs,
command output), a timeline of the model calls (context by part, summaries, clears and dropped turns, prefix-cache
share, cost) and the totals ram usage gives for the session."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (ram view --help)\n")


class BadTarget(Exception):
    """What was named is not a session or a batch folder: one line saying why."""


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="ram view",
        description="Write a session or a ram batch out folder as one self-contained HTML file.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "target",
        nargs="?",
        metavar="SESSION|BATCH_OUT",
        help="a session id (or its start) of this directory, a transcript .jsonl, or a ram batch --out folder "
        "(default: this directory's newest session)",
    )
    parser.add_argument("-o", "--output", type=Path, metavar="FILE.html", help="where to write the page")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        written = _write(args.target, args.output)
    except BadTarget as exc:
        print(f"error: {visible(str(exc))}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {visible(where + (exc.strerror or str(exc)))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    for path in written[:1]:
        size = path.stat().st_size
        extra = f" and {len(written) - 1} task page(s) beside it" if len(written) > 1 else ""
        print(f"wrote {visible(str(path))} ({_size(size)}){extra}")
    return 0


def _write(target: str | None, output: Path | None) -> list[Path]:
    """Write the page(s) for `target`; the files written, the main one first."""
    path = Path(target) if target else None
    if path is not None and path.is_dir():
        if not (path / "results.jsonl").is_file():
            raise BadTarget(f"{path} is not a ram batch --out folder (it has no results.jsonl)")
        from .batch_page import write_batch

        return write_batch(path, output or path / "view.html")
    transcript_path = _transcript(target)
    from .html import write_page
    from .reading import read_story
    from .session_page import session_page

    story = read_story(transcript_path)
    if not story.meta and not story.calls and not story.items:
        raise BadTarget(f"{transcript_path} is not a ram transcript (no record in it could be read)")
    out = output or Path(f"ram-{story.session_id[:8]}.html")
    write_page(out, session_page(story))
    return [out]


def _transcript(target: str | None) -> Path:
    """The transcript `target` names: a file, or a session of this directory (its newest when None)."""
    if target and (target.endswith(".jsonl") or os.sep in target or Path(target).is_file()):
        path = Path(target)
        if not path.is_file():
            raise BadTarget(f"{target}: no such transcript")
        return path
    sessions = transcript.list_sessions(Path.cwd())
    if not sessions:
        raise BadTarget("this directory has no saved session (ram view PATH.jsonl shows any transcript)")
    if not target:
        return sessions[0].path
    found = [s for s in sessions if s.session_id.startswith(target)]
    if not found:
        raise BadTarget(f"no session of this directory starts with {target!r} (ram --resume lists them)")
    if len(found) > 1:
        raise BadTarget(f"{target!r} is the start of {len(found)} sessions of this directory: give more of its id")
    return found[0].path


def _size(size: int) -> str:
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MB"
    return f"{max(1, round(size / 1024))} KB"
