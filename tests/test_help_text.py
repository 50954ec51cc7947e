"""`ram --help` is printed from the recorded help (`help_text`, `help_data.py`) without building the parser: it must
be exactly what the parser prints, at every terminal width, and follow every change of the flags."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from react_agent_mini import cli, help_data, help_record, help_text

from .test_cli import env_for, ram

WIDTHS = [1, 10, 20, 24, 30, 40, 44, 45, 50, 60, 64, 70, 78, 79, 80, 81, 100, 120, 133, 160, 250, 1000]
REGENERATE = "the flags changed: run `.venv/bin/python -m react_agent_mini.help_record` to record them again"


def parser_help(monkeypatch: pytest.MonkeyPatch, columns: int) -> str:
    """What argparse prints for `ram --help` at `columns`."""
    monkeypatch.setenv("COLUMNS", str(columns))
    return cli.build_parser(help_only=True).format_help()


def test_the_recorded_options_are_the_parsers() -> None:
    if tuple(sys.version_info[:2]) != help_data.PYTHON:
        pytest.skip(f"recorded on Python {help_data.PYTHON}, whose argparse formats options differently")
    usage, sections = help_record.record()
    assert (usage, [tuple(section) for section in sections]) == (help_data.USAGE, list(help_data.SECTIONS)), REGENERATE


@pytest.mark.parametrize("columns", WIDTHS)
def test_the_help_is_laid_out_as_argparse_lays_it_out(columns: int, monkeypatch: pytest.MonkeyPatch) -> None:
    usage, sections = help_record.record()  # this checkout's flags, on this Python: the layout alone is checked
    expected = parser_help(monkeypatch, columns)
    assert help_text.layout(usage, cli.DESCRIPTION, sections, cli.EPILOG, columns) == expected
    if tuple(sys.version_info[:2]) == help_data.PYTHON:
        assert help_text.render(cli.DESCRIPTION, cli.EPILOG) == expected, REGENERATE


@pytest.mark.parametrize(("flag", "columns"), [("--help", "80"), ("-h", "133"), ("--help", "37")])
def test_ram_help_prints_what_the_parser_prints(
    flag: str, columns: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    helped = ram(flag, env=env_for(None, None, COLUMNS=columns), cwd=tmp_path)
    assert helped.returncode == 0 and helped.stderr == ""
    assert helped.stdout == parser_help(monkeypatch, int(columns))


def test_on_another_python_the_parser_prints_the_help(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(help_data, "PYTHON", (2, 7))
    monkeypatch.setenv("COLUMNS", "90")
    assert help_text.render(cli.DESCRIPTION, cli.EPILOG) is None
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    with pytest.raises(SystemExit) as exited:  # argparse's print_help, then its exit
        cli.main(["--help"])
    assert exited.value.code == 0 and out.getvalue() == cli.build_parser(help_only=True).format_help()
