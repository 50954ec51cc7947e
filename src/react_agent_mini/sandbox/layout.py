"""The filesystem one sandboxed command sees, as bwrap mount arguments (after `bwrap.base_mounts`).

- workspace-write: the workspace and each `--add-dir` are bound writable. Inside each of them, what can make a
  later program run stays read-only: `.git/config`, `.git/config.worktree`, `.git/hooks` and the directory
  `core.hooksPath` names (an empty read-only one is put there when there is none); the files the permission
  checker guards even in acceptEdits (`.mcp.json`, `.envrc`, `.agents/settings*.json`, `.claude/settings*.json`);
  ram's own user settings directory if it falls inside. `.git` itself is bound onto itself, so it cannot be
  renamed or replaced by another directory; a `.git` file (worktree, submodule) is read-only. The rest of `.git`
  stays writable: `git add`, `git commit` and `git checkout` work; `git config` and `git remote add` do not. The
  submodules and worktrees kept in `.git` (`modules/*`, `worktrees/*`) get the same: their `config`,
  `config.worktree` and `hooks` are read-only.
- read-only: the workspace is visible, nothing is writable but the private temp dir.
- both: the session's private temp dir is `/tmp` (TMPDIR=/tmp); the host's `/tmp` is not visible (unless the
  workspace contains it: then the private dir is bound at its own path and TMPDIR names it). Paths covered by a
  Read deny rule (`masks`) are hidden behind an empty directory or file that nobody may read (mode 000); one that
  would hide a writable root or the temp dir itself is left visible, and said so. Paths covered by an Edit or
  Write deny rule are read-only.

Mounts are ordered parents first (a shorter path before a longer one; at the same depth writable, then
read-only, then hidden), so each layer covers the one below it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Literal, NamedTuple

from .masks import Hidden
from .settings import SandboxMode

GIT_PROTECTED = ("config", "config.worktree")
"""Files in `.git` read-only inside the sandbox (with `hooks`): they name programs git runs."""
Kind = Literal["bind", "ro", "hide-dir", "hide-file", "empty-dir"]
_RANK = {"bind": 0, "ro": 1, "empty-dir": 1, "hide-dir": 2, "hide-file": 2}


class Props(NamedTuple):
    """The host-side files the layout binds in (made once per session, see `runtime`)."""

    private_tmp: Path
    """The session's private temp dir (writable inside)."""
    hidden_dir: Path
    """An empty directory, mode 000: what a hidden directory looks like."""
    hidden_file: Path
    """An empty file, mode 000: what a hidden file looks like."""
    empty_dir: Path
    """An empty directory, mode 555 (a `.git/hooks` that was not there)."""


class Layout(NamedTuple):
    """The mounts for one command and what to tell about them."""

    args: list[str]
    tmp_inside: str
    """Where the private temp dir is inside the sandbox (TMPDIR)."""
    notes: list[str]
    """Lines to show the user once per session (a deny rule whose paths could not be hidden, ...)."""


class _Mount(NamedTuple):
    dest: Path
    kind: Kind
    source: Path


def writable_roots(mode: SandboxMode, workspace: Path, extra: Sequence[Path]) -> list[Path]:
    """The directories bound writable (none in read-only mode), nested ones left out."""
    if mode != "workspace-write":
        return []
    roots: list[Path] = []
    for path in sorted({workspace.resolve(), *extra}, key=lambda p: len(p.parts)):
        if not any(_within(path, root) for root in roots):
            roots.append(path)
    return roots


def plan(
    mode: SandboxMode,
    workspace: Path,
    extra: Sequence[Path],
    props: Props,
    hidden: Hidden,
    guarded: Iterable[str],
    user_config: Path,
    frozen: Hidden | None = None,
) -> Layout:
    """The mounts for a command in `mode` with `workspace` (and `extra` writable dirs), hiding `hidden`, keeping
    `frozen` (what Edit deny rules cover) read-only."""
    roots = writable_roots(mode, workspace, extra)
    notes: list[str] = []
    mounts: list[_Mount] = []
    tmp = Path("/tmp")
    if any(_within(tmp, root) for root in roots):  # the workspace holds /tmp (or is /): keep the private dir apart
        tmp = props.private_tmp
    mounts.append(_Mount(tmp, "bind", props.private_tmp))
    if mode == "read-only":
        mounts.append(_Mount(workspace.resolve(), "ro", workspace.resolve()))  # visible even under /tmp
    guarded = tuple(guarded)
    for root in roots:
        mounts.append(_Mount(root, "bind", root))
        mounts += _protected(root, guarded, props)
    config_dir = user_config.resolve()
    if any(_within(config_dir, root) for root in roots) and config_dir.is_dir():
        mounts.append(_Mount(config_dir, "ro", config_dir))
    if frozen is not None:
        for path in [*frozen.directories, *frozen.files]:
            if any(_within(path, root) for root in roots):  # elsewhere everything is read-only already
                mounts.append(_Mount(path, "ro", path))
        if frozen.truncated:
            notes.append("the sandbox stopped looking for files covered by Edit deny rules after 100,000 names")
    keep_visible = [*roots, props.private_tmp, workspace.resolve()]
    for path, kind in [*((d, "hide-dir") for d in hidden.directories), *((f, "hide-file") for f in hidden.files)]:
        if any(_within(root, path) for root in keep_visible):
            notes.append(f"a Read deny rule covers {path}, which holds the workspace or the temp dir: not hidden")
            continue
        if _within(path, Path("/tmp")) and not any(_within(path, root) for root in roots):
            continue  # the host's /tmp is not visible anyway
        if kind == "hide-dir":
            mounts.append(_Mount(path, "hide-dir", props.hidden_dir))
        else:
            mounts.append(_Mount(path, "hide-file", props.hidden_file))
    if hidden.truncated:
        notes.append("the sandbox stopped looking for files covered by Read deny rules after 100,000 names")
    return Layout(_arguments(mounts), str(tmp), notes)


def _protected(root: Path, guarded: Sequence[str], props: Props) -> list[_Mount]:
    """What stays read-only inside the writable `root`."""
    out: list[_Mount] = []
    git = root / ".git"
    if git.is_dir() and not git.is_symlink():
        out.append(_Mount(git, "bind", git))  # a mount point cannot be renamed or removed
        for name in GIT_PROTECTED:
            if (git / name).is_file():
                out.append(_Mount(git / name, "ro", git / name))
        hooks = git / "hooks"
        if hooks.is_dir() and not hooks.is_symlink():
            out.append(_Mount(hooks, "ro", hooks))
        elif not os.path.lexists(hooks):
            out.append(_Mount(hooks, "empty-dir", props.empty_dir))
        hooks_path = _hooks_path(git / "config", root)
        if hooks_path is not None and hooks_path.is_dir():
            out.append(_Mount(hooks_path, "ro", hooks_path))
        elif hooks_path is not None and not os.path.lexists(hooks_path):
            out.append(_Mount(hooks_path, "empty-dir", props.empty_dir))  # or a command could make it, hooks and all
        out += _inner_repositories(git)
    elif git.is_file():
        out.append(_Mount(git, "ro", git))
    for name in guarded:
        path = root / name
        if path.is_file() and not path.is_symlink():
            out.append(_Mount(path, "ro", path))
    from ..permissions.policy import GUARDED_DIRS

    for name in GUARDED_DIRS:  # the scripts settings-file hooks run, outside the sandbox
        path = root / name
        if path.is_dir() and not path.is_symlink():
            out.append(_Mount(path, "ro", path))
    return out


def _inner_repositories(git: Path, limit: int = 200) -> list[_Mount]:
    """The configuration and hooks of the repositories kept inside `.git`: submodules (`modules/NAME`, nested
    `modules/NAME/modules/...`) and worktrees (`worktrees/NAME/config.worktree`). git runs what they name when
    it works in a submodule (`git status` recurses into them) or a worktree, so they are read-only like `.git`'s."""
    out: list[_Mount] = []
    todo = [git / "modules", git / "worktrees"]
    seen = 0
    while todo and seen < limit:
        directory = todo.pop()
        try:
            entries = [e for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            seen += 1
            inner = Path(entry.path)
            for name in (*GIT_PROTECTED, "hooks"):
                path = inner / name
                if (path.is_dir() if name == "hooks" else path.is_file()) and not path.is_symlink():
                    out.append(_Mount(path, "ro", path))
            if (inner / "config").is_file() or (inner / "HEAD").is_file():
                todo.append(inner / "modules")  # a repository: its own submodules
            elif directory.name != "worktrees":
                todo.append(inner)  # a submodule named with a slash: `modules/libs/x`
    return out


_HOOKS_PATH = re.compile(r"^\s*hookspath\s*=\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)


def _hooks_path(config: Path, root: Path) -> Path | None:
    """The directory `core.hooksPath` names (husky's `.husky`, a `.githooks`), when it is inside `root`: its
    scripts run at the next `git commit`, yours included, so they stay read-only too (and one that is not there
    yet stays empty)."""
    try:
        found = _HOOKS_PATH.findall(config.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None
    if not found:
        return None
    path = (root / os.path.expanduser(found[-1].strip('"'))).resolve()
    return path if _within(path, root) and path != root else None


def _arguments(mounts: list[_Mount]) -> list[str]:
    args: list[str] = []
    done: set[tuple[Path, Kind]] = set()
    hidden = [m.dest for m in mounts if m.kind == "hide-dir"]
    for mount in sorted(mounts, key=lambda m: (len(m.dest.parts), _RANK[m.kind])):
        if (mount.dest, mount.kind) in done or any(dest in mount.dest.parents for dest in hidden):
            continue  # nothing is mounted inside a hidden directory (nor could be: it is read-only and empty)
        done.add((mount.dest, mount.kind))
        flag = "--bind" if mount.kind == "bind" else "--ro-bind"
        args += [flag, str(mount.source), str(mount.dest)]
    return args


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def guarded_missing(roots: Sequence[Path], guarded: Iterable[str]) -> list[Path]:
    """The guarded files that do not exist under the writable `roots` (a command must not create them), and a
    repository's `.git/config.worktree` (git reads it once `extensions.worktreeConfig` is set)."""
    missing: list[Path] = []
    for root in roots:
        names = [*guarded, ".git/config.worktree"] if (root / ".git").is_dir() else list(guarded)
        missing += [root / name for name in names if not os.path.lexists(root / name)]
    return missing
