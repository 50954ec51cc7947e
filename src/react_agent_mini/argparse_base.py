"""argparse as `ram`'s own parser is built on (`cli.build_parser`): a usage error in one line, and `--help`
formatted without the regular expressions argparse and textwrap compile for it.

`ram --help` should cost little more than starting Python: argparse's usage line (built from every option, then
split with regular expressions to wrap it) and textwrap (which compiles its word splitter on import) were most of
its time, so the usage line is given (`USAGE`) and help texts are wrapped at spaces (`help_text.wrap`). `ram --help`
alone does not even build the parser: it prints `help_text.render()`, this parser's help recorded and laid out the
same way.
"""

from __future__ import annotations

import argparse

from .help_text import terminal_columns, wrap

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
