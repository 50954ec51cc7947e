"""`ram --help` without argparse: the parser's help, laid out here exactly as argparse lays it out.

Building `ram`'s parser (argparse, every flag's action, gettext's first lookups) and formatting it cost more than
starting Python does, only to print text that changes when the flags do. So `ram --help` (and `-h`) alone prints
`render(description, epilog, columns)`: the usage line, the description, each section's options with their help,
and the epilog, at the terminal's width, by argparse's layout rules (`argparse.HelpFormatter` with
`argparse_base.HelpFormatter`'s wrapping). The options come from `help_data.py`, which
`python -m react_agent_mini.help_record` generates from `cli.build_parser(help_only=True)`;
`tests/test_help_text.py` fails, saying to run it, as soon as the real parser's `format_help()` differs at any
width. The description and the epilog are handed in by `cli`, where they are written. On a Python whose argparse
the data was not recorded with (its layout differs between versions), `render` returns None and the parser prints
the help as before.

Imports nothing: `cli` has loaded `os` and `sys` already.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # not `typing`'s: importing typing would cost more than this module
if TYPE_CHECKING:
    from collections.abc import Sequence

    Section = tuple[str | None, str | None, Sequence[tuple[str, str | None]]]
    """A section's title, its description and its entries: (invocation, expanded help or None)."""

MAX_HELP_POSITION = 24
"""argparse.HelpFormatter's `max_help_position` default."""
INDENT = 2
"""argparse.HelpFormatter's `indent_increment` default: sections are indented by this much."""


def terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else stdout's terminal, else 80."""
    try:
        columns = int(os.environ.get("COLUMNS", "0"))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def wrap(text: str, width: int) -> list[str]:
    """`text`'s words (runs of whitespace are one space) in lines of at most `width` characters; a longer word
    gets a line of its own."""
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def render(description: str, epilog: str, columns: int | None = None) -> str | None:
    """`ram --help` as `cli.build_parser(help_only=True).format_help()` prints it at `columns` (None: the
    terminal's), given the parser's description and epilog (cli's); None when this Python's argparse is not the
    one the help was recorded with."""
    from . import help_data

    if tuple(sys.version_info[:2]) != help_data.PYTHON:
        return None
    return layout(help_data.USAGE, description, help_data.SECTIONS, epilog, columns or terminal_columns())


def layout(usage: str, description: str, sections: Sequence[Section], epilog: str, columns: int) -> str:
    """argparse's `format_help` for a parser with a given usage, raw description and epilog, and these sections,
    with `argparse_base.HelpFormatter` (width: the columns less 2; help wrapped at spaces)."""
    width = columns - 2
    max_help_position = min(MAX_HELP_POSITION, max(width - 20, INDENT * 2))
    longest = max((len(invocation) + INDENT for _, _, entries in sections for invocation, _ in entries), default=0)
    help_position = min(longest + 2, max_help_position)
    help_width = max(width - help_position, 11)
    action_width = help_position - INDENT - 2
    parts = ["\n", f"usage: {usage}\n\n", _raw(description, "") + "\n\n"]
    for title, text, entries in sections:
        items = [_raw(text, " " * INDENT) + "\n\n"] if text else []
        for invocation, help_ in entries:
            if not help_:
                items.append(f"{'':{INDENT}}{invocation}\n")
                continue
            if len(invocation) <= action_width:
                items.append(f"{'':{INDENT}}{invocation:<{action_width}}  ")
                first = 0
            else:
                items.append(f"{'':{INDENT}}{invocation}\n")
                first = help_position
            lines = wrap(help_, help_width)
            items.append(f"{'':{first}}{lines[0]}\n")
            items.extend(f"{'':{help_position}}{line}\n" for line in lines[1:])
        if items:
            parts += ["\n", f"{title}:\n" if title is not None else "", *items, "\n"]
    parts += [_raw(epilog, "") + "\n\n", "\n"]
    text = "".join(parts)
    while "\n\n\n" in text:  # argparse: re.sub(r"\n\n\n+", "\n\n", ...)
        text = text.replace("\n\n\n", "\n\n")
    return text.strip("\n") + "\n"


def _raw(text: str, indent: str) -> str:
    """`argparse.RawDescriptionHelpFormatter._fill_text`: the text as written, each line indented."""
    return "".join(indent + line for line in text.splitlines(keepends=True))
