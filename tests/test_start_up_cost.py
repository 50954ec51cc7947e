"""What `ram` imports before it answers (issue 28): `--version` nothing but the package and cli.py, `--help` only
argparse and the flag declarations. Imports are read from `python -X importtime` in a real subprocess (counting
modules, not timing them: the machine's load cannot make these fail or pass)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .test_cli import env_for


def imported(*args: str, cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    """The modules `python -X importtime -m react_agent_mini ARGS` imported, in order."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "react_agent_mini", *args],
        env=env or env_for(None, None),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return [line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]


def test_version_is_answered_before_argparse_typing_asyncio_or_the_http_client(tmp_path: Path) -> None:
    for flag in ("--version", "-v"):
        modules = imported(flag, cwd=tmp_path)
        assert "react_agent_mini.cli" in modules  # the check can see our imports
        ours = [name for name in modules if name.startswith("react_agent_mini")]
        assert ours == ["react_agent_mini", "react_agent_mini.cli"], ours
        heavy = {"argparse", "typing", "asyncio", "httpx", "msgspec", "re", "enum"}
        assert heavy.isdisjoint(modules), heavy & set(modules)


def test_help_loads_argparse_and_the_flags_only(tmp_path: Path) -> None:
    modules = imported("--help", cwd=tmp_path)
    assert {"argparse", "react_agent_mini.claude_flags"} <= set(modules)
    ours = {name for name in modules if name.startswith("react_agent_mini")}
    assert ours == {
        "react_agent_mini",
        "react_agent_mini.cli",
        "react_agent_mini.claude_flags",
        "react_agent_mini.argparse_base",
    }
    # typing (≈4 ms), shutil (brings bz2 and lzma) and textwrap (compiles its word splitter) are not needed to
    # print the help; asyncio, httpx and msgspec belong to a run
    assert {"typing", "shutil", "textwrap", "asyncio", "httpx", "msgspec"}.isdisjoint(modules)
