"""Memory: a Markdown file the model keeps across sessions, `.agents/memory/MEMORY.md`.

The model remembers and forgets with the ordinary Write and Edit tools (so every change passes the permission
check); its content goes into the system prompt, capped at 32 KB. The session asks `changed()` before each turn
and rebuilds the system prompt only when the file's modification time or size moved, so an unchanged memory
keeps the provider's prompt cache warm.

Which file: the nearest existing `.agents/memory/MEMORY.md` from the working directory up to the repository root,
so a session started in a subfolder shares the project's memory; when there is none yet, the working directory's.
The directory is not created in advance (Write creates missing parent directories). The file is read only when
it resolves inside the project it was found in (`confined.py`): a MEMORY.md that is a link to `~/.ssh/id_rsa` is
left out, with one warning naming it.
"""

from __future__ import annotations

import os
from pathlib import Path

from .confined import project_root, read_inside
from .project import cap_utf8, search_levels

MEMORY_FILE = Path(".agents") / "memory" / "MEMORY.md"
"""Where the memory file lives, relative to a project directory."""
CAP_BYTES = 32 * 1024
"""The most UTF-8 bytes of memory given to the model."""
TRUNCATION_NOTE = "\n\n[memory truncated at 32KB]"


def find_memory_file(cwd: Path) -> Path:
    """The memory file for a session started in `cwd` (it may not exist yet)."""
    cwd = cwd.resolve()
    levels, _, _ = search_levels(cwd)
    for directory in reversed(levels):
        candidate = directory / MEMORY_FILE
        try:
            if candidate.is_file():
                return candidate
        except OSError:
            continue
    return cwd / MEMORY_FILE


# (mtime in ns, size, inode): size and inode catch a rewrite within the filesystem's mtime granularity, and an
# editor's save-by-rename.
_Signature = tuple[int, int, int] | None


class Memory:
    """The memory file, read on demand; `changed()` tells whether it moved since the last `text()`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        """The MEMORY.md file (it may not exist)."""
        self.root = project_root(_project_of(path))
        """Where the file may resolve: the project it is in (a link leading elsewhere is not read)."""
        self.warning = ""
        """Why the last `text()` could not read the file (naming it), or empty."""
        self.truncated = False
        """True when the last `text()` was cut at the cap."""
        self._read_signature: _Signature = None
        self._read_once = False

    def exists(self) -> bool:
        """True when the file is there now."""
        return self._signature() is not None

    def text(self) -> str:
        """The current content, capped at 32 KB with a note; empty when the file is missing or unreadable."""
        signature = self._signature()
        self._read_signature = signature
        self._read_once = True
        self.warning = ""
        self.truncated = False
        if signature is None:
            return ""
        try:
            raw = read_inside(self.path, (self.root,), CAP_BYTES)
        except OSError as exc:
            self.warning = f"{self.path}: cannot read it ({exc.strerror or exc}); memory left out"
            return ""
        text, self.truncated = cap_utf8(raw.rstrip(), CAP_BYTES, TRUNCATION_NOTE)
        return text

    def changed(self) -> bool:
        """True when the file changed (written, created, deleted) since the last `text()`, or was never read."""
        return not self._read_once or self._signature() != self._read_signature

    def _signature(self) -> _Signature:
        try:
            info = os.stat(self.path)
        except OSError:
            return None
        return (info.st_mtime_ns, info.st_size, info.st_ino)


def _project_of(path: Path) -> Path:
    """The directory a memory file at `path` belongs to: the one holding its `.agents/memory/`."""
    if path.parts[-len(MEMORY_FILE.parts) :] == MEMORY_FILE.parts:
        return path.parents[len(MEMORY_FILE.parts) - 1]
    return path.parent
