"""The first hour: the README's first commands work as typed — `scripts/run` without Node, setup that says what
it is doing (and nothing once done), and `ram` on PATH after the step the README gives.

The scripts run for real, in a copy of `scripts/` and `pyproject.toml`. Installing packages needs the network, so
the copy's `.venv` is the one running these tests, linked in with the stamps of a finished setup: what runs is
the scripts' own logic deciding what is left to do. The first-run test lets pip fail offline, after our line.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .fakes.fake_llm import FakeLLMServer, Reply
from .test_cli import env_for
from .ui.test_repl_minimal import Term

REPO = Path(__file__).resolve().parents[1]
NODE_PROGRAMS = ("node", "nodejs", "npm", "npx", "corepack")


def checkout(tmp_path: Path, *, stamps: tuple[str, ...] = (".installed", ".installed-dev")) -> Path:
    """The scripts and pyproject.toml in a fresh directory; its `.venv` links to the venv running the tests."""
    root = tmp_path / "checkout"
    shutil.copytree(REPO / "scripts", root / "scripts")
    shutil.copy2(REPO / "pyproject.toml", root)  # keeps its mtime: older than the stamps below
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").symlink_to(sys.executable)
    (venv_bin / "ram").symlink_to(Path(sys.executable).parent / "ram")
    for stamp in stamps:
        (root / ".venv" / stamp).touch()
    return root


def path_without_node(tmp_path: Path) -> str:
    """A PATH with every program of ours except Node's (one directory of links)."""
    bin_dir = tmp_path / "no-node-bin"
    bin_dir.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.scandir(directory):
            link = bin_dir / entry.name
            if entry.name not in NODE_PROGRAMS and not link.exists() and os.access(entry.path, os.X_OK):
                link.symlink_to(entry.path)
    path = str(bin_dir)
    assert shutil.which("npm", path=path) is None and shutil.which("bash", path=path)
    return path


def run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_", "RAM_"))}
    full.pop("QUERY_MOCK", None)
    full.update(env)
    return subprocess.run(command, cwd=cwd, env=full, capture_output=True, text=True, timeout=120)


def test_scripts_run_needs_no_node_works_from_anywhere_and_says_nothing_once_set_up(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    work = tmp_path / "elsewhere"
    work.mkdir()
    (work / "AGENTS.md").write_text("ELSEWHERE-NOTES: this is the caller's directory.\n")
    path = path_without_node(tmp_path)

    version = run([str(root / "scripts/run"), "--version"], work, PATH=path)
    assert (version.returncode, version.stdout.strip(), version.stderr) == (0, "react-agent-mini 0.1.0", "")

    demo = run([str(root / "scripts/run"), "--mock", "echo hi"], work, PATH=path)
    assert demo.returncode == 0, demo.stderr
    assert "Echo reply: hi" in demo.stdout
    assert demo.stderr == "[tool] Echo: hi\n"  # the agent's tool line; nothing from setup

    prompt = run([str(root / "scripts/run"), "--print-system-prompt"], work, PATH=path)
    assert prompt.returncode == 0, prompt.stderr
    assert "ELSEWHERE-NOTES" in prompt.stdout and f"Working directory: {work.resolve()}" in prompt.stdout
    assert not (root / ".mcp-servers").exists()


def test_the_test_setup_says_in_one_line_that_npm_is_missing(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    path = path_without_node(tmp_path)
    result = run([str(root / "scripts/setup"), "--dev"], root, PATH=path)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: npm not found: the tests talk to")
    assert not (root / ".mcp-servers").exists()
    plain = run([str(root / "scripts/setup")], root, PATH=path)  # the run command's setup needs no npm
    assert (plain.returncode, plain.stderr) == (0, "")


def test_first_setup_says_what_it_is_doing_before_the_slow_part(tmp_path: Path) -> None:
    root = checkout(tmp_path, stamps=())
    shutil.rmtree(root / ".venv")
    offline = {  # pip finds nothing and fails at once: no network, and this machine's pip config is not read
        "PYTHON": sys.executable,
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": "",
        "PIP_NO_CACHE_DIR": "1",
    }
    first = run([str(root / "scripts/run"), "--version"], root, **offline)
    assert first.stderr.startswith("setting up .venv: react-agent-mini and its Python dependencies (first run, about")
    assert "hatchling" in first.stderr and first.stdout == ""  # then pip's own reason, on stderr
    assert first.returncode != 0 and (root / ".venv/bin/python").exists() and not (root / ".venv/.installed").exists()
    again = run([str(root / "scripts/run"), "--version"], root, **offline)
    assert again.stderr.startswith("installing react-agent-mini into .venv (about")  # the venv is there: the rest
    assert again.returncode != 0


def readme_section(heading: str) -> list[str]:
    """The commands in the ```sh blocks of a README section (comments after two spaces dropped)."""
    text = (REPO / "README.md").read_text()
    section = text.split(f"\n{heading}\n", 1)[1]
    section = re.split(r"\n#{2,3} ", section, maxsplit=1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [re.split(r"\s{2,}#", line)[0].strip() for block in blocks for line in block.splitlines() if line.strip()]


def test_every_ram_in_use_it_works_after_the_step_the_readme_gives(fake_llm: FakeLLMServer, tmp_path: Path) -> None:
    if not (REPO / ".venv/bin/ram").exists():
        pytest.fail("the repository has no .venv: run scripts/test, which sets it up")
    commands = readme_section("## Use it")
    activate = next(c for c in commands if "activate" in c)
    examples = [c for c in commands if re.search(r"(^|\| )ram\b", c)]
    assert activate == "source .venv/bin/activate" and len(examples) >= 6
    work = tmp_path / "project"
    work.mkdir()
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    env = env_for("openai", fake_llm, PATH=os.defpath)  # no ram on this PATH: the README's step must put it there
    prefix = f"cd {REPO} && {activate} && cd {work} && "
    for example in examples:
        if example == "ram":  # on a terminal: the REPL
            with Term(env=env, cwd=work, program=("/bin/bash", "-c", prefix + "exec ram")) as term:
                term.prompt()
                term.send("\x04")
                assert term.wait() == 0, example
            continue
        fake_llm.enqueue(Reply(text="done"))
        result = subprocess.run(
            ["/bin/bash", "-c", prefix + example], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
        )
        assert result.returncode == 0, f"{example}: {result.stderr}"
        assert "done" in result.stdout, example


def test_the_readmes_link_for_every_shell_runs_ram_from_any_directory(tmp_path: Path) -> None:
    link = next(c for c in readme_section("## Use it") if "ln -s" in c)
    home = tmp_path / "home"
    (home / ".local/bin").mkdir(parents=True)
    made = run(["/bin/bash", "-c", link], REPO, HOME=str(home))  # `~/.local/bin` is the test's own
    assert made.returncode == 0, made.stderr
    result = run(["ram", "--version"], tmp_path, PATH=f"{home / '.local/bin'}{os.pathsep}{os.defpath}")
    assert (result.returncode, result.stdout.strip()) == (0, "react-agent-mini 0.1.0")
