"""`ram rewind`: list a session's turns, or take its code, its conversation, or both back to right after a turn
(`EXAMPLES` below, which `ram rewind --help` shows too).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from .. import session_lock, transcript
from ..terminal_text import visible
from .conversation import CannotCut, cut_index, next_id
from .rewind import back_to, code_lines, held, listing, plan_for, rewind_code, turns
from .store import CheckpointStore, store_dir

EXAMPLES = """examples:
  ram rewind                  the turns of this directory's newest session, numbered from 1
  ram rewind 2                code and conversation back to right after turn 2
  ram rewind 2 --code         only the files (--conversation: only the conversation)
  ram rewind 0                back to the start: everything the agent changed undone, the conversation emptied
  ram rewind 2 --force        also overwrite files changed since the agent last changed them
  ram rewind --session ID     another session of this directory (an id or its start)

The session's lock is held throughout (a session another `ram` is writing is refused, exit 2). A file someone
changed since the agent last did is left as it is and named, and the exit code is 1, unless --force. A file whose
folder now leads outside the workspace (a folder replaced by a link), or that is now a link or has other hard links,
is never written or removed, even with --force: it is named, and the exit code is 1. When the code is not all back,
the conversation is not rewound either (one line says so, exit 1): --conversation rewinds it alone."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ram rewind",
        description="List the turns of this directory's newest session, or rewind its code, its conversation,\n"
        "or both, to the state right after turn TURN.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "turn", nargs="?", type=int, metavar="TURN", help="the turn to go back to (from the listing; 0: the start)"
    )
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--code", action="store_const", const="code", dest="what", help="only the files")
    what.add_argument(
        "--conversation", action="store_const", const="conversation", dest="what", help="only the conversation"
    )
    what.add_argument("--both", action="store_const", const="both", dest="what", help="both (the default)")
    parser.add_argument(
        "--force", action="store_true", help="also overwrite files changed since the agent last changed them"
    )
    parser.add_argument("-r", "--session", metavar="ID", help="a session of this directory other than the newest")
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    cwd = Path.cwd()
    if args.session:
        path = transcript.find_session(cwd, args.session)
        if path is None:
            return _error(f"no single session of this directory matches {args.session!r} (ram --resume lists them)")
    else:
        sessions = transcript.list_sessions(cwd)
        if not sessions:
            return _error("no saved session in this directory")
        path = sessions[0].path
    try:
        lock = session_lock.SessionLock.acquire(path)
    except session_lock.SessionInUse as exc:
        return _error(str(exc))
    except OSError as exc:
        return _error(f"cannot lock {path}: {exc}")
    try:
        return asyncio.run(_rewind(args, path, lock, cwd))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except OSError as exc:  # the transcript or the store cannot be read or written
        return _error(f"cannot rewind {path.name}: {exc}")
    finally:
        lock.release()


async def _rewind(args: argparse.Namespace, path: Path, lock: session_lock.SessionLock, cwd: Path) -> int:
    loaded = transcript.load(path)
    history = loaded.messages
    store = CheckpointStore(store_dir(path))
    workspace = Path(str(loaded.meta.get("cwd") or cwd))
    summaries = await turns(store, history)
    if args.turn is None:
        print(f"session {loaded.session_id[:12]} · {len(summaries)} turn(s) · {workspace}")
        print("\n".join(visible(line) for line in listing(summaries, workspace)))
        if summaries:
            print(
                "ram rewind N restores code and conversation to right after turn N (--code, --conversation: one; "
                "0: to the start)"
            )
        return 0
    if not 0 <= args.turn <= len(summaries):
        return _error(f"there is no turn {args.turn}: the session has {len(summaries)} (ram rewind lists them)")
    what = args.what or "both"
    keep = None
    if what != "code":
        try:
            keep = cut_index(history, args.turn)
        except CannotCut as exc:
            return _error(str(exc))
    status = 0
    if what != "conversation":
        plan = await plan_for(store, history, args.turn)

        async def confirm(step: object) -> bool:
            return bool(args.force)

        outcome = await rewind_code(store, plan, confirm, workspace=workspace)
        print(f"code back {back_to(args.turn)}:")
        print("\n".join(visible(line) for line in code_lines(outcome, workspace)))
        if outcome.kept:
            print("rerun with --force to overwrite the files left as they are", file=sys.stderr)
        status = 1 if outcome.kept or outcome.refused or outcome.failed else 0
        if keep is not None and outcome.left:  # never the conversation without the code it speaks of
            print(visible(held(outcome, f"`ram rewind {args.turn} --conversation`")))
            keep, status = None, 1
    if keep is not None:
        dropped = len(history) - keep
        if dropped and keep < len(history) - len(loaded.repaired):
            written = transcript.Transcript.reopen(path, lock)
            try:
                written.rewound(keep, next_id(history, keep))
            finally:
                written.close()  # releases the lock too: nothing is written after this
        turns_dropped = len(summaries) - args.turn
        print(
            f"conversation back {back_to(args.turn)}: {turns_dropped} later turn(s) dropped "
            f"({dropped} message(s)); `ram -c` continues from there"
        )
    return status


def _error(text: str) -> int:
    print(f"error: {visible(text)}", file=sys.stderr)
    return 2
