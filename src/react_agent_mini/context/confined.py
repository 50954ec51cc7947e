"""Reading the files a repository supplies as context only where they really are: inside the project.

A repository is not trusted, and what it supplies as context goes to the model: AGENTS.md / CLAUDE.md and their
`@` imports, `.agents/memory/MEMORY.md`, SKILL.md files, custom command files (`.claude/commands/`,
`.agents/commands/`) and agent files (`.claude/agents/`, `.agents/agents/`). Any of them may be a symbolic link, or
sit in a linked folder, leading to `~/.ssh/id_rsa` or `../outside.txt`. So every one of those readers reads through
`read_inside`, which reads a file only when its resolved location is inside the roots it is given:

- a project file, found in a directory of the project: `project_root(that directory)` — the repository holding it
  (the nearest folder at or above it with `.git`, at most `MAX_LEVELS` up), or, outside any repository, that
  directory itself (a CLAUDE.md found in a parent folder may be read, but a link from it must stay in that
  folder's tree);
- a file of the user's own (`$XDG_CONFIG_HOME/react-agent-mini/…`): the user's config directory;
- an `@` import: the repository root, or without a repository the working directory (`project.py`).

A link whose target stays inside is fine (CLAUDE.md → AGENTS.md is common). One that leads outside is not read:
`LeadsOutside` is raised, an `OSError` whose text says where it leads, so each reader's usual warning names the
skipped file in one line: `…/CLAUDE.md: cannot read it (it leads outside /repo, to /home/u/.ssh/id_rsa); skipped`.

The check holds for the file as opened, not only as looked at: the resolved path is opened without following a
final link, and where the system says which file a descriptor is (`/proc/self/fd/N`, Linux) that is checked again,
so a link swapped in between the check and the read is refused as well.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path

MAX_LEVELS = 5
"""How far above a directory its repository's `.git` is looked for (as far as project context is looked for above
the working directory)."""


class LeadsOutside(OSError):
    """The file resolves to a place outside the roots it may be read from."""

    def __init__(self, target: Path, roots: Sequence[Path]) -> None:
        where = " or ".join(str(root) for root in roots) or "the project"
        super().__init__(errno.EACCES, f"it leads outside {where}, to {target}")
        self.target = target


def project_root(directory: Path) -> Path:
    """Where a project file found in `directory` may lead: the repository holding `directory`, else `directory`."""
    directory = Path(os.path.realpath(directory))
    for level, folder in enumerate(_upwards(directory)):
        if level > MAX_LEVELS:
            break
        if has_git(folder):
            return folder
    return directory


def has_git(directory: Path) -> bool:
    """True when `directory` holds `.git` (a directory, or the file a worktree or submodule has)."""
    try:
        return (directory / ".git").exists()
    except OSError:
        return False


def inside(roots: Sequence[Path], path: Path) -> bool:
    """True when the resolved `path` is one of `roots` (each resolved) or below one."""
    return any(path == root or root in path.parents for root in roots)


def resolve_inside(path: Path, roots: Sequence[Path]) -> Path:
    """`path` with every link resolved; `LeadsOutside` when that is not inside one of `roots`."""
    resolved_roots = [Path(os.path.realpath(root)) for root in roots]
    target = Path(os.path.realpath(path))
    if not inside(resolved_roots, target):
        raise LeadsOutside(target, resolved_roots)
    return target


def read_inside(path: Path, roots: Sequence[Path], max_bytes: int) -> str:
    """At most `max_bytes` (plus one, so a caller can tell it was longer) of the file `path` as text, when it
    resolves inside one of `roots`; undecodable bytes become U+FFFD and a leading BOM goes. `LeadsOutside` when it
    does not; OSError when it cannot be read, or is not a regular file (a FIFO could block forever)."""
    target = resolve_inside(path, roots)
    resolved_roots = [Path(os.path.realpath(root)) for root in roots]
    fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as stream:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "it is a directory" if stat.S_ISDIR(info.st_mode) else "not a regular file")
        opened = _opened_path(fd)
        if opened is not None and not inside(resolved_roots, opened):
            raise LeadsOutside(opened, resolved_roots)  # a folder on the way became a link since the check
        data = stream.read(max_bytes + 1)
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


def _opened_path(fd: int) -> Path | None:
    """Where the file open as `fd` is, as the kernel knows it; None where it does not say."""
    try:
        found = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None
    return None if found.endswith(" (deleted)") or not found.startswith("/") else Path(found)


def _upwards(start: Path) -> Iterator[Path]:
    directory = start
    while True:
        yield directory
        if directory.parent == directory:
            return
        directory = directory.parent
