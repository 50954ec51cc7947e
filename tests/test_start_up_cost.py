"""What `ram` imports before it answers (issue 28): `--version` nothing but the package and cli.py, `--help` alone
the recorded help (not even argparse), `--help` among other flags argparse and the flag declarations only, a
headless run's first request none of what only later calls need. Imports are read from `python -X importtime` in a
real subprocess (counting modules, not timing them: the machine's load cannot make these fail or pass)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from .fakes.fake_llm import FakeLLMServer, Reply
from .test_cli import env_for


def importtime_stderr(*args: str, cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    """The stderr lines of `python -X importtime -m react_agent_mini ARGS`, which must exit 0."""
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
    return proc.stderr.splitlines()


def module_names(lines: list[str]) -> list[str]:
    """The modules the `import time:` lines among `lines` name, in order."""
    return [line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")]


def imported(*args: str, cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    """The modules `python -X importtime -m react_agent_mini ARGS` imported, in order."""
    return module_names(importtime_stderr(*args, cwd=cwd, env=env))


def test_version_is_answered_before_argparse_typing_asyncio_or_the_http_client(tmp_path: Path) -> None:
    for flag in ("--version", "-v"):
        modules = imported(flag, cwd=tmp_path)
        assert "react_agent_mini.cli" in modules  # the check can see our imports
        ours = [name for name in modules if name.startswith("react_agent_mini")]
        assert ours == ["react_agent_mini", "react_agent_mini.cli"], ours
        heavy = {"argparse", "typing", "asyncio", "httpx", "msgspec", "re", "enum"}
        assert heavy.isdisjoint(modules), heavy & set(modules)


def test_help_is_printed_without_argparse_or_the_flag_declarations(tmp_path: Path) -> None:
    modules = imported("--help", cwd=tmp_path)
    ours = {name for name in modules if name.startswith("react_agent_mini")}
    # the recorded help (tests/test_help_text.py checks it against the parser), laid out without argparse
    assert ours == {
        "react_agent_mini",
        "react_agent_mini.cli",
        "react_agent_mini.help_text",
        "react_agent_mini.help_data",
    }
    # argparse (with gettext and locale), typing (≈4 ms), shutil (brings bz2 and lzma), textwrap (compiles its word
    # splitter) and re are not needed to print it; asyncio, httpx and msgspec belong to a run
    heavy = {"argparse", "gettext", "typing", "shutil", "textwrap", "re", "asyncio", "httpx", "msgspec"}
    assert heavy.isdisjoint(modules), heavy & set(modules)


def test_help_with_other_flags_loads_argparse_and_the_flags_only(tmp_path: Path) -> None:
    modules = imported("--model", "x", "--help", cwd=tmp_path)
    assert {"argparse", "react_agent_mini.claude_flags"} <= set(modules)
    ours = {name for name in modules if name.startswith("react_agent_mini")}
    assert ours == {
        "react_agent_mini",
        "react_agent_mini.cli",
        "react_agent_mini.claude_flags",
        "react_agent_mini.argparse_base",
        "react_agent_mini.help_text",  # the help's wrapping and the terminal's width
        "react_agent_mini.permission_modes",  # the --permission-mode choices and their help
        "react_agent_mini.provider_registry",  # the --provider choices
    }
    assert {"typing", "shutil", "textwrap", "asyncio", "httpx", "msgspec"}.isdisjoint(modules)


LAZY_ON_THE_FIRST_REQUEST = {
    # third-party: the MCP SDK (≈0.6 s), the REPL's input line, SKILL.md frontmatter, the Bash grammar, tokenizers
    "mcp",
    "pydantic",
    "prompt_toolkit",
    "yaml",
    "tree_sitter",
    "tree_sitter_bash",
    "tiktoken",
    # ours: what a first model call of a headless run never needs
    "react_agent_mini.ui",  # the REPL
    "react_agent_mini.batch",
    "react_agent_mini.acp",
    "react_agent_mini.stream_json",
    "react_agent_mini.usage",
    "react_agent_mini.view",
    "react_agent_mini.web.fetch",  # WebFetch's client and page reading: only once it is called
    "react_agent_mini.web.markdown",
    "react_agent_mini.mcp.manager",  # MCP servers: only when one is configured
    "react_agent_mini.mcp.sdk",
    "react_agent_mini.checkpoints.store",  # checkpoints: only once something changes
    "react_agent_mini.checkpoints.git",
    "react_agent_mini.subagents.run",  # subagents: only once the Agent tool is called
    "react_agent_mini.sandbox.bwrap",  # the sandbox: only at the first Bash command
    "react_agent_mini.sandbox.runtime",
    "react_agent_mini.permissions.bash",  # Bash permission checks: only for a Bash call
}
"""Modules (and their submodules) a headless run has not imported by the end of a one-call task (issue 28: import
only what the first request needs)."""
LAZY = sorted(LAZY_ON_THE_FIRST_REQUEST)


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_first_request_of_a_headless_run_leaves_the_rest_unimported(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Hello."))
    modules = set(imported("hello", cwd=tmp_path, env=env_for(wire, fake_llm)))
    assert len(fake_llm.requests) == 1 and "react_agent_mini.headless" in modules  # the run did reach the model
    loaded = {name for name in modules if any(name == lazy or name.startswith(lazy + ".") for lazy in LAZY)}
    assert loaded == set()


BEFORE_THE_FIRST_REQUEST_NEVER = {"asyncio", "httpx", "httpcore", "h11", "anyio", "msgspec", "typing", "ssl"}
"""Not imported before a headless run's first request is on the wire (`early/`): the event loop, the HTTP client,
msgspec and typing load while the model reads (ssl: the fake model is plain http)."""


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_first_request_is_on_the_wire_before_the_event_loop_the_http_client_and_msgspec_load(
    wire: str, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    fake_llm.enqueue(Reply(text="Hello."))
    lines = importtime_stderr("hello", cwd=tmp_path, env=env_for(wire, fake_llm, TRACE="1"))
    sent = next(i for i, line in enumerate(lines) if line.startswith("[trace] early.sent"))  # the same stream, in order
    before, after = set(module_names(lines[:sent])), set(module_names(lines[sent:]))
    assert "react_agent_mini.early.lane" in before and "httpx" in after  # the check sees both sides
    assert before & BEFORE_THE_FIRST_REQUEST_NEVER == set()
    assert len(fake_llm.requests) == 1
