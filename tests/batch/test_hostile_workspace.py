"""A batch task's workspace made from, and read back out of, hostile repositories: cloning the task's repository,
checking out its base commit and taking the patch run nothing a repository — or a planted global config — names.
Real git on real repositories; each planted program would `touch` a marker."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from react_agent_mini.batch import workspace as ws


def plain_git(cwd: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    full = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    full |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t",
             "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    full |= env or {}
    return subprocess.run(["git", *args], cwd=cwd, env=full, capture_output=True, text=True, check=True).stdout


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


def program(markers: Path, name: str) -> str:
    return f"touch {markers / name}; cat"


def filters(markers: Path, name: str) -> str:
    return (
        f'[filter "{name}"]\n\tclean = {program(markers, "clean")}\n\tsmudge = {program(markers, "smudge")}\n'
        f"[core]\n\tfsmonitor = {program(markers, 'fsmonitor')}\n"
    )


@pytest.fixture
def source(tmp_path: Path, markers: Path) -> Path:
    """A task repository whose tree assigns a filter to every file and whose own config defines it, with hooks
    and an fsmonitor."""
    repo = tmp_path / "source"
    repo.mkdir()
    plain_git(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_bytes(b"def add(a, b):\r\n    return a - b\r\n")
    (repo / ".gitattributes").write_text("* filter=lfs\n")
    plain_git(repo, "add", "-A")
    plain_git(repo, "commit", "-q", "-m", "start")
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(filters(markers, "lfs"))
    hooks = repo / ".git" / "hooks"
    for name in ("post-checkout", "reference-transaction", "post-index-change"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {markers / ('source-' + name)}\n")
        (hooks / name).chmod(0o755)
    return repo


@pytest.fixture
def users_global(tmp_path: Path, markers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The user's global config as an LFS install leaves it, plus a template directory whose hooks would be copied
    into every clone (what a planted `~/.gitconfig` could hold)."""
    home = tmp_path / "home"
    templates = home / "templates" / "hooks"
    templates.mkdir(parents=True)
    for name in ("post-checkout", "reference-transaction", "post-index-change"):
        (templates / name).write_text(f"#!/bin/sh\ntouch {markers / ('template-' + name)}\n")
        (templates / name).chmod(0o755)
    (home / ".gitconfig").write_text(filters(markers, "lfs") + f"[init]\n\ttemplateDir = {home / 'templates'}\n")
    monkeypatch.setenv("HOME", str(home))


async def test_cloning_and_checking_out_run_nothing(
    source: Path, users_global: None, markers: Path, tmp_path: Path
) -> None:
    made = await ws.create(str(source), None, tmp_path / "work" / "t1", tmp_path / "cache")
    assert sorted(p.name for p in markers.iterdir()) == []
    assert (made.path / "calc.py").read_bytes() == b"def add(a, b):\r\n    return a - b\r\n"
    assert made.base == plain_git(source, "rev-parse", "HEAD").strip()
    assert not (made.path / ".git" / "hooks").exists()  # no template copied


async def test_the_patch_runs_nothing_a_nested_repository_or_a_planted_commondir_names(
    source: Path, markers: Path, tmp_path: Path
) -> None:
    made = await ws.create(str(source), None, tmp_path / "work" / "t1", tmp_path / "cache")
    await ws.after_setup(made)
    work = made.path
    (work / "calc.py").write_bytes(b"def add(a, b):\r\n    return a + b\r\n")
    # what the agent's commands can do even in the sandbox: a repository of their own, added as a gitlink
    nested = work / "vendor"
    nested.mkdir()
    plain_git(nested, "init", "-q")
    (nested / "lib.txt").write_text("lib\n")
    (nested / ".gitattributes").write_text("* filter=x\n")
    plain_git(nested, "add", "-A")
    plain_git(nested, "commit", "-q", "-m", "lib")
    with (nested / ".git" / "config").open("a") as handle:
        handle.write(filters(markers, "x"))
    plain_git(work, "add", "vendor")
    (nested / "lib.txt").write_text("lib, changed\n")
    # and what the sandbox now refuses, planted here directly: a commondir to a copy with a filter
    evil = tmp_path / "evilgit"
    shutil.copytree(work / ".git", evil)
    with (evil / "config").open("a") as handle:
        handle.write(filters(markers, "x"))
    (work / ".git" / "commondir").write_text(f"{evil}\n")
    (work / "new.txt").write_text("new\n")
    (work / ".gitattributes").write_text("* filter=x\n")

    text = await ws.patch(made)

    assert sorted(p.name for p in markers.iterdir()) == []
    assert "+    return a + b" in text and "new.txt" in text and "vendor" in text
