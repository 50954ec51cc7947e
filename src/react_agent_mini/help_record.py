"""Recording `ram --help`'s options into `help_data.py` (`python -m react_agent_mini.help_record`): the parser
built, each entry formatted by this Python's argparse, written out. Above `cli` and `help_text`, which lays the
recorded help out at `ram --help` without building the parser; `tests/test_help_text.py` checks both agree."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .help_text import Section


def record() -> tuple[str, list[Section]]:
    """The usage line and the sections of this checkout's parser, as this Python's argparse formats their entries
    (what `help_data.py` holds)."""
    from .argparse_base import HelpFormatter
    from .cli import build_parser

    parser = build_parser(help_only=True)
    formatter = HelpFormatter(parser.prog)
    sections: list[Section] = []
    for group in parser._action_groups:
        entries: list[tuple[str, str | None]] = []
        for action in group._group_actions:
            if action.help == "==SUPPRESS==":
                continue
            assert not list(formatter._iter_indented_subactions(action)), "subcommands are not laid out here"
            invocation = formatter._format_action_invocation(action)
            help_ = formatter._expand_help(action) if action.help and action.help.strip() else None
            entries.append((invocation, help_))
        sections.append((group.title, group.description, tuple(entries)))
    return (parser.usage or "") % {"prog": parser.prog}, sections


def source() -> str:
    """`help_data.py` for this checkout's parser, on this Python."""
    usage, sections = record()
    body = "".join(
        f"    ({title!r}, {text!r}, (\n" + "".join(f"        {entry!r},\n" for entry in entries) + "    )),\n"
        for title, text, entries in sections
    )
    return (
        '"""`ram --help`\'s usage line and options, recorded from `cli.build_parser(help_only=True)` by\n'
        '`python -m react_agent_mini.help_record` (do not edit: `tests/test_help_text.py` says when to run it)."""\n\n'
        f"PYTHON = {tuple(sys.version_info[:2])!r}\n"
        '"""The Python whose argparse formatted the entries below (their layout differs between versions)."""\n'
        f"USAGE = {usage!r}\n"
        f"SECTIONS = (\n{body})\n"
    )


if __name__ == "__main__":
    import shutil
    import subprocess
    from pathlib import Path

    target = Path(__file__).with_name("help_data.py")
    target.write_text(source(), encoding="utf-8")
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff:  # the repository's own layout (`ruff format --check` in the checks)
        subprocess.run([ruff, "format", "--quiet", str(target)], check=False)
    print(f"wrote {target}")
