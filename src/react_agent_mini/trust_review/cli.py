"""`ram trust`: show what a folder's own configuration would do, and trust it (or list and revoke trust).

    ram trust [PATH]            show what trusting PATH (default: here) enables, and trust it as it is now
    ram trust --always [PATH]   trust PATH and everything below it, including what its configuration adds later
    ram trust --list            the folders you trusted, and the trees `trustedFolders` trusts whole
    ram trust --revoke [PATH]   forget PATH's trust: its hooks, servers and allow rules are left out again

Trusting records the parts as they are now: one that is added or changed later (a `git pull`) is left out until
you trust the folder again. It is meant for scripts and CI as much as for people (`ram trust . && ram "…"`); in
the REPL, ram asks instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..terminal_text import visible

EPILOG = """\
A folder's own configuration can run commands on this machine (hooks, MCP servers) and widen what runs without
asking (allow rules, defaultMode: acceptEdits, a custom command's allowed-tools). Until you trust the folder, ram
leaves those parts out; its deny and ask rules, CLAUDE.md/AGENTS.md, memory, skills and commands still apply.
Trust is kept in your config directory (trusted-folders.json), never in the project. To trust whole trees without
being asked, list them in ~/.config/react-agent-mini/settings.json: {"trustedFolders": ["~/work"]}.
exit codes: 0 done, 1 the trust store cannot be written, 2 usage error (e.g. PATH is not a folder)."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ram trust",
        description="Show what a folder's own configuration would do, and trust it.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("path", nargs="?", default=".", help="the folder (default: the current one)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--list", action="store_true", help="list the trusted folders")
    what.add_argument("--revoke", action="store_true", help="forget the folder's trust")
    what.add_argument(
        "--always",
        action="store_true",
        help="trust the folder and everything below it whatever its configuration says later (your own projects)",
    )
    return parser


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.list:
        return _list()
    folder = Path(args.path).expanduser()
    if not folder.is_dir():
        print(f"error: {visible(str(folder))} is not a folder", file=sys.stderr)
        return 2
    folder = folder.resolve()
    from ..trust.store import revoke_trust

    if args.revoke:
        try:
            found = revoke_trust(folder)
        except OSError as exc:
            print(f"error: cannot write the trust store: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"{'no longer trusted' if found else 'was not trusted'}: {visible(str(folder))}")
        return 0
    return _trust(folder, always=args.always)


def _trust(folder: Path, *, always: bool) -> int:
    from ..trust.store import record_trust, store_path
    from .inventory import describe, project_items

    items = project_items(folder, os.environ)
    try:
        record_trust(folder, (item.key for item in items), always=always)
    except OSError as exc:
        print(f"error: cannot write the trust store {store_path()}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    print(f"trusted: {visible(str(folder))}" + (" and everything below it, from now on" if always else ""))
    if always:
        return 0
    if items:
        print("its own configuration may now:")
        print("\n".join(describe(items)))
        print("(a part added or changed later is left out until you trust the folder again)")
    else:
        print("it has no hooks, MCP servers, allow rules or commands' allowed-tools today; any added later are left")
        print("out until you trust it again")
    return 0


def _list() -> int:
    from ..trust.gate import read_user_settings
    from ..trust.store import read_store, trusted_trees

    folders, problem = read_store()
    trees, warnings = trusted_trees(read_user_settings(os.environ))
    for line in ([problem] if problem else []) + warnings:
        print(f"warning: {visible(line)}", file=sys.stderr)
    if not folders and not trees:
        print("no trusted folders (ram trust PATH trusts one)")
        return 0
    for key, record in sorted(folders.items()):
        parts = len(record.approved)
        what = "and everything below it" if record.always else f"{parts} part{'s' * (parts != 1)}"
        print(f"{visible(key)}  trusted {record.trusted_at or '(time unknown)'}, {what}")
    for tree in trees:
        print(f"{visible(str(tree))}  and everything below it (trustedFolders in your settings)")
    return 0
