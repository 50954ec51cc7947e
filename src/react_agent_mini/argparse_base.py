"""argparse as `ram`'s own parser is built on (`cli.build_parser`): a usage error in one line, and `--help`
formatted without the regular expressions argparse and textwrap compile for it.

`ram --help` should cost little more than starting Python: argparse's usage line (built from every option, then
split with regular expressions to wrap it) and textwrap (which compiles its word splitter on import) were most of
its time, so the usage line is given (`USAGE`) and help texts are wrapped at spaces here.
"""

from __future__ import annotations

import argparse
import os
import sys

TYPE_CHECKING = False  # not `typing`'s: importing typing costs `ram --help` ≈4 ms
if TYPE_CHECKING:
    from typing import NoReturn

USAGE = """\
%(prog)s [-h] [options] [task ...]
       %(prog)s {mcp,batch,acp,trust,rewind,usage,view} ...  (see below)"""
"""The usage line `ram --help` starts with (`usage: ram [-h] ...`): the options follow, each with its metavar."""


class UsageParser(argparse.ArgumentParser):
    """argparse, with a usage error as one line (`error: argument --max-turns: invalid int value: 'x'`) instead of
    the usage block first; exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message}\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Description and epilog as written; each option's help wrapped at spaces, to the terminal's width as argparse
    would pick it (without importing shutil, which brings bz2, lzma and zlib along)."""

    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=terminal_columns() - 2)

    def _split_lines(self, text: str, width: int) -> list[str]:
        return wrap(text, width)


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
