"""The filesystem one sandboxed command sees, as bwrap mount arguments (after `bwrap.base_mounts`).

- workspace-write: the workspace and each `--add-dir` are bound writable. Inside each of them, what can make a
  later program run stays read-only: in `.git`, `config`, `config.worktree`, `hooks` and the files through which
  git reads another repository's config, attributes or objects — `commondir`, `gitdir`, `info/attributes`,
  `objects/info/alternates` (`GIT_PROTECTED`) —, and the directory `core.hooksPath` names (an empty read-only one
  is put there when there is none); the files the permission checker guards even in acceptEdits (`.mcp.json`,
  `.envrc`, `.agents/settings*.json`, `.claude/settings*.json`, `.claude/hooks`, `.agents/hooks`); ram's own user
  settings directory if it falls inside. `.git` itself is bound onto itself, so it cannot be renamed or replaced
  by another directory; a `.git` file (a `gitdir:` one: the workspace's own, each submodule checkout's that
  `.gitmodules` names, each linked worktree's that `.git/worktrees/*/gitdir` names) is read-only. The rest of
  `.git` stays writable: `git add`, `git commit` and `git checkout` work; `git config` and `git remote add` do not.
  The submodules and worktrees kept in `.git` (`modules/*`, `worktrees/*`) get the same: their `config`,
  `config.worktree`, `hooks`, `commondir`, `gitdir`, `info/attributes` and `objects/info/alternates` are
  read-only. Such a file that is not there yet (`guarded_missing`) and that a command creates is moved aside
  after it (`runtime`). Every folder between a writable root and a path kept read-only inside it is bound onto
  itself too (`_pinned`): a mount point cannot be renamed or removed, so `mv .claude x && mkdir -p .claude/hooks`
  cannot swap a read-only path's folder for a writable one (a rename across those folders fails with EXDEV, as
  between file systems; `mv` copies instead).
- read-only: the workspace is visible, nothing is writable but the private temp dir.
- both: the session's private temp dir is `/tmp` (TMPDIR=/tmp); the host's `/tmp` is not visible (unless the
  workspace contains it: then the private dir is bound at its own path and TMPDIR names it) — but a home directory
  under it (containers and CI runners set HOME=/tmp/…) stays visible, read-only, so `~` works as on other
  machines. Paths covered by a Read deny rule (`masks`) are hidden behind an empty directory or file that nobody
  may read (mode 000); one that would hide a writable root or the temp dir itself is left visible, and said so.
  Paths covered by an Edit or Write deny rule are read-only.

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

GIT_PROTECTED = ("config", "config.worktree", "commondir", "gitdir", "info/attributes", "objects/info/alternates")
"""Files in `.git` (and in each of `.git/modules/*` and `.git/worktrees/*`) read-only inside the sandbox, with
`hooks`: they name programs git runs, or the other files git reads its config, attributes and objects from."""
INNER_LIMIT = 200
"""Submodules and worktrees looked at in one `.git` (nested ones included)."""
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
    *,
    home: Path | None = None,
) -> Layout:
    """The mounts for a command in `mode` with `workspace` (and `extra` writable dirs), hiding `hidden`, keeping
    `frozen` (what Edit deny rules cover) read-only. `home`: the user's home directory, which stays visible
    (read-only, as the rest of the host) even when it lies under the host's `/tmp` (containers, CI runners)."""
    roots = writable_roots(mode, workspace, extra)
    notes: list[str] = []
    mounts: list[_Mount] = []
    tmp = Path("/tmp")
    if any(_within(tmp, root) for root in roots):  # the workspace holds /tmp (or is /): keep the private dir apart
        tmp = props.private_tmp
    mounts.append(_Mount(tmp, "bind", props.private_tmp))
    visible_home = _home_under_tmp(home, tmp, roots)
    if visible_home is not None:  # `~` under the host's /tmp would vanish behind the private one
        mounts.append(_Mount(visible_home, "ro", visible_home))
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
    mounts += _pinned(mounts, roots)
    keep_visible = [*roots, props.private_tmp, workspace.resolve()]
    for path, kind in [*((d, "hide-dir") for d in hidden.directories), *((f, "hide-file") for f in hidden.files)]:
        if any(_within(root, path) for root in keep_visible):
            notes.append(f"a Read deny rule covers {path}, which holds the workspace or the temp dir: not hidden")
            continue
        shown = [*roots, *([visible_home] if visible_home is not None else [])]
        if _within(path, Path("/tmp")) and not any(_within(path, root) for root in shown):
            continue  # the host's /tmp is not visible anyway
        if kind == "hide-dir":
            mounts.append(_Mount(path, "hide-dir", props.hidden_dir))
        else:
            mounts.append(_Mount(path, "hide-file", props.hidden_file))
    if hidden.truncated:
        notes.append("the sandbox stopped looking for files covered by Read deny rules after 100,000 names")
    return Layout(_arguments(mounts), str(tmp), notes)


def _home_under_tmp(home: Path | None, tmp: Path, roots: Sequence[Path]) -> Path | None:
    """`home`, resolved, when it lies under the host's `/tmp` (hidden by the private temp dir) and is not already
    visible as a writable root; else None."""
    if home is None or tmp != Path("/tmp"):
        return None
    try:
        resolved = home.resolve()
    except (OSError, RuntimeError):
        return None
    if not _within(resolved, Path("/tmp")) or resolved == Path("/tmp") or not resolved.is_dir():
        return None
    if any(_within(resolved, root) for root in roots):
        return None
    return resolved


def _protected(root: Path, guarded: Sequence[str], props: Props) -> list[_Mount]:
    """What stays read-only inside the writable `root`."""
    out: list[_Mount] = []
    git = root / ".git"
    if git.is_dir() and not git.is_symlink():
        out.append(_Mount(git, "bind", git))  # a mount point cannot be renamed or removed
        out += _repository_files(git)
        hooks = git / "hooks"
        if not os.path.lexists(hooks):
            out.append(_Mount(hooks, "empty-dir", props.empty_dir))
        hooks_path = _hooks_path(git / "config", root)
        if hooks_path is not None and hooks_path.is_dir():
            out.append(_Mount(hooks_path, "ro", hooks_path))
        elif hooks_path is not None and not os.path.lexists(hooks_path):
            out.append(_Mount(hooks_path, "empty-dir", props.empty_dir))  # or a command could make it, hooks and all
        for inner in _inner_repositories(git):
            out += _repository_files(inner)
    elif git.is_file() and not git.is_symlink():
        out.append(_Mount(git, "ro", git))
    for dotgit in _linked_dotgits(root):
        if dotgit.is_file() and not dotgit.is_symlink():
            out.append(_Mount(dotgit, "ro", dotgit))
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


def _repository_files(gitdir: Path) -> list[_Mount]:
    """The protected files of one git directory (`.git`, or a submodule's or worktree's inside it) that exist."""
    out: list[_Mount] = []
    for name in GIT_PROTECTED:
        path = gitdir / name
        if path.is_file() and not path.is_symlink() and _real_parents(gitdir, path):
            out.append(_Mount(path, "ro", path))
    hooks = gitdir / "hooks"
    if hooks.is_dir() and not hooks.is_symlink():
        out.append(_Mount(hooks, "ro", hooks))
    return out


def _real_parents(top: Path, path: Path) -> bool:
    """True when no folder between `top` and `path` is a link (a mount through one would land elsewhere)."""
    return not any(folder.is_symlink() for folder in path.parents if folder != top and _within(folder, top))


def _inner_repositories(git: Path, limit: int = INNER_LIMIT) -> list[Path]:
    """The repositories kept inside `.git`: submodules (`modules/NAME`, nested `modules/NAME/modules/...`) and
    worktrees (`worktrees/NAME`). git runs what their config names when it works in a submodule (`git status`
    recurses into them) or a worktree, so their files are read-only like `.git`'s."""
    out: list[Path] = []
    todo = [git / "modules", git / "worktrees"]
    while todo and len(out) < limit:
        directory = todo.pop()
        try:
            entries = [e for e in os.scandir(directory) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for entry in entries:
            inner = Path(entry.path)
            if (inner / "config").is_file() or (inner / "HEAD").is_file():
                out.append(inner)
                todo.append(inner / "modules")  # a repository: its own submodules
            elif directory.name != "worktrees":
                todo.append(inner)  # a submodule named with a slash: `modules/libs/x`
    return out[:limit]


_MODULE_PATH = re.compile(r"^\s*path\s*=\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)


def _linked_dotgits(root: Path, limit: int = INNER_LIMIT) -> list[Path]:
    """The `gitdir:` files inside `root` other than its own `.git`: each submodule checkout's (the paths
    `.gitmodules` names) and each linked worktree's that lies inside (`.git/worktrees/*/gitdir` names it). Such a
    file tells git where a repository's config is; the ones that are there are kept read-only, and one that a
    command creates is moved aside."""
    found: list[Path] = []
    try:
        text = (root / ".gitmodules").read_text(encoding="utf-8", errors="replace")[: 1 << 20]
    except OSError:
        text = ""
    for named in _MODULE_PATH.findall(text)[:limit]:
        path = Path(os.path.normpath(root / named.strip('"'))) / ".git"
        if _within(path.parent, root) and path.parent != root and path.parent.is_dir():
            found.append(path)
    git = root / ".git"
    if git.is_dir() and not git.is_symlink():
        for inner in _inner_repositories(git):
            try:
                named = (inner / "gitdir").read_text(encoding="utf-8", errors="replace")[:4096].strip()
            except OSError:
                continue
            path = Path(os.path.normpath(inner / named))
            if named and path.name == ".git" and _within(path.parent, root) and path.parent != root:
                found.append(path)
    return found


def _pinned(mounts: Sequence[_Mount], roots: Sequence[Path]) -> list[_Mount]:
    """Each folder between a writable root and a path kept read-only inside it, bound onto itself: a folder that
    is a mount point cannot be renamed or removed, so the read-only path cannot be carried off with its folder and
    a writable one made in its place."""
    out: list[_Mount] = []
    seen: set[Path] = set()
    for mount in mounts:
        if mount.kind not in ("ro", "empty-dir"):
            continue
        root = next((r for r in roots if _within(mount.dest, r) and mount.dest != r), None)
        if root is None:
            continue
        for folder in mount.dest.parents:
            if folder == root or folder in seen or not _within(folder, root):
                break
            seen.add(folder)
            if folder.is_dir() and not folder.is_symlink():
                out.append(_Mount(folder, "bind", folder))
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
    """The guarded files that do not exist under the writable `roots` (a command must not create them): those
    `guarded` names, and in a repository the `GIT_PROTECTED` files of `.git` and of each submodule and worktree kept
    in it (`config.worktree`, which git reads once `extensions.worktreeConfig` is set; a `commondir`, `gitdir`,
    `info/attributes` or `objects/info/alternates` that would send git to another repository's config,
    attributes or objects; a submodule's or worktree's `hooks`) and the `.git` file of each submodule checkout and
    linked worktree inside."""
    guarded = tuple(guarded)
    missing: list[Path] = []
    for root in roots:
        paths = [root / name for name in guarded]
        git = root / ".git"
        if git.is_dir() and not git.is_symlink():
            paths += [git / name for name in GIT_PROTECTED]
            for inner in _inner_repositories(git):  # (`.git/hooks` itself gets an empty read-only stand-in)
                paths += [inner / name for name in (*GIT_PROTECTED, "hooks")]
        paths += _linked_dotgits(root)
        missing += [path for path in paths if not os.path.lexists(path)]
    return missing
