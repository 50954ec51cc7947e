"""Project context: the AGENTS.md / CLAUDE.md instructions the model gets in its system prompt.

Where the files are looked for, in the order they are joined (nearest last, so the most specific comes last):
1. the user-level `AGENTS.md` in the user's config directory;
2. every directory from the repository root (the nearest ancestor holding `.git`, a directory or a file) down to
   the working directory; without a repository, at most 5 levels above the working directory. In each directory
   `AGENTS.md` then `CLAUDE.md`.
Files are joined with `\\n\\n---\\n\\n`, as upstream react-agent-mini does for the two names of one directory.

A repository is not trusted (`confined.py`): a context file is read only when it resolves inside the project —
the repository, or without one the folder it was found in —, the user-level one inside the user's config
directory; a link leading elsewhere is skipped with one warning naming it.

A line that is only `@path/to/file` imports that file in its place (Claude Code's convention), relative to the
importing file, nested up to 5 deep, confined to the repository — without a repository, to the working directory
(a file found above it may be read, but may not pull in more from there) —, the user-level file's to its own
directory. Cycles, missing files and escapes are skipped with a warning. The whole text is capped at 64 KB with a
visible note. Missing context files are normal and say nothing.
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator
from pathlib import Path

from . import confined
from .confined import has_git as _has_git

CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")
"""The names read in each directory, in this order."""
USER_CONTEXT_FILE = "AGENTS.md"
"""The name read in the user's config directory."""
MAX_LEVELS = confined.MAX_LEVELS
"""Ancestors searched above the working directory when no repository root is found first."""
SEPARATOR = "\n\n---\n\n"
"""Between two context files."""
CAP_BYTES = 64 * 1024
"""The most UTF-8 bytes of project context the system prompt carries."""
TRUNCATION_NOTE = "\n\n[project context truncated at 64KB]"
MAX_IMPORT_DEPTH = 5
"""How many `@` hops are followed from a context file (Claude Code's limit)."""

_IMPORT_LINE = re.compile(r"^[ \t]*@(\S+)[ \t]*$")
_FENCE = re.compile(r"^[ \t]*(```|~~~)")


class ProjectContext:
    """The project instructions found for a working directory (a plain class, not a msgspec struct: the
    first request is built before msgspec is imported, `early/`)."""

    __slots__ = ("files", "imports", "root", "text", "truncated", "warnings")

    def __init__(
        self,
        text: str = "",
        files: tuple[Path, ...] = (),
        imports: tuple[Path, ...] = (),
        warnings: tuple[str, ...] = (),
        root: Path | None = None,
        truncated: bool = False,
    ) -> None:
        self.text = text
        """The joined instructions, imports expanded, capped; empty when there are none."""
        self.files = files
        """The context files read, in the order they were joined (user-level first, then root → working
        directory)."""
        self.imports = imports
        """Files pulled in by `@path` lines, in the order they were first imported."""
        self.warnings = warnings
        """One line per problem (unreadable file, bad import, truncation), each naming the file."""
        self.root = root
        """The top directory searched: the repository root, or the last of the 5 levels without one."""
        self.truncated = truncated
        """True when the text was cut at the cap."""

    def _key(self) -> tuple[object, ...]:
        return (self.text, self.files, self.imports, self.warnings, self.root, self.truncated)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProjectContext) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"ProjectContext(files={self.files!r}, root={self.root!r}, truncated={self.truncated!r})"


def find_repo_root(start: Path, *, max_levels: int | None = None) -> Path | None:
    """The nearest directory at or above `start` that holds `.git`, looking at most `max_levels` ancestors up
    (None: up to the filesystem root); None when there is none."""
    for level, directory in enumerate(_upwards(start)):
        if max_levels is not None and level > max_levels:
            return None
        if _has_git(directory):
            return directory
    return None


def search_levels(cwd: Path) -> tuple[list[Path], Path, bool]:
    """The directories searched for context files, from the top down to `cwd`, the top one, and whether that top
    one is a repository root (holds `.git`)."""
    levels: list[Path] = []
    in_repo = False
    for level, directory in enumerate(_upwards(cwd)):
        if level > MAX_LEVELS:
            break
        levels.append(directory)
        if _has_git(directory):
            in_repo = True
            break
    levels.reverse()
    return levels, levels[0], in_repo


def load_project_context(cwd: Path, *, user_dir: Path) -> ProjectContext:
    """The project instructions for a session started in `cwd`; never raises (problems become warnings)."""
    cwd = cwd.resolve()
    levels, root, in_repo = search_levels(cwd)
    import_root = root if in_repo else cwd  # what `@` imports may reach
    loader = _Loader()
    # (the file, where it may resolve, what its imports may reach)
    candidates: list[tuple[Path, Path, Path]] = [(user_dir / USER_CONTEXT_FILE, user_dir, user_dir)]
    for directory in levels:
        home = confined.project_root(directory)
        candidates += [(directory / name, home, import_root) for name in CONTEXT_FILES]
    parts: list[str] = []
    for path, home, confine in candidates:
        text = loader.load_context_file(path, home, confine)
        if text is not None and text.strip():
            parts.append(text.rstrip())
    joined = SEPARATOR.join(parts)
    text, truncated = cap_utf8(joined, CAP_BYTES, TRUNCATION_NOTE)
    if truncated:
        size = len(joined.encode("utf-8")) // 1024
        loader.warnings.append(
            f"project context is {size} KB (from {', '.join(str(p) for p in loader.files)}); "
            f"only the first {CAP_BYTES // 1024} KB are given to the model"
        )
    return ProjectContext(
        text=text,
        files=tuple(loader.files),
        imports=tuple(loader.imports),
        warnings=tuple(loader.warnings),
        root=root,
        truncated=truncated,
    )


def cap_utf8(text: str, cap_bytes: int, note: str) -> tuple[str, bool]:
    """`text` if it fits in `cap_bytes` UTF-8 bytes; else its longest prefix that fits with `note` appended (the
    result, note included, stays within the cap), and True."""
    data = text.encode("utf-8")
    if len(data) <= cap_bytes:
        return text, False
    room = max(0, cap_bytes - len(note.encode("utf-8")))
    # "ignore" drops a character cut in half at the boundary instead of producing a replacement character.
    return data[:room].decode("utf-8", errors="ignore") + note, True


def read_text_capped(path: Path, max_bytes: int) -> str:
    """At most `max_bytes` (plus one, so callers can tell it was longer) of a file as text; undecodable bytes
    become U+FFFD. Raises OSError; refuses anything but a regular file (a FIFO could block forever). It follows
    links wherever they lead: a file a repository supplies is read with `confined.read_inside` instead."""
    if not path.is_file():
        raise OSError(errno.EINVAL, "it is a directory" if path.is_dir() else "not a regular file")
    with path.open("rb") as stream:
        data = stream.read(max_bytes + 1)
    return data.decode("utf-8", errors="replace").removeprefix("\ufeff")


class _Loader:
    """Reads context files and expands their imports, remembering what it read and what went wrong."""

    def __init__(self) -> None:
        self.files: list[Path] = []
        self.imports: list[Path] = []
        self.warnings: list[str] = []
        self._seen: set[Path] = set()

    def load_context_file(self, path: Path, home: Path, confine: Path) -> str | None:
        """The text of the context file `path`, its imports expanded (None when it is not read): only when it
        resolves inside `home`; its imports may reach only inside `confine`."""
        try:
            if not path.exists():
                return None
            resolved = path.resolve()
        except OSError as exc:
            self.warnings.append(f"{path}: cannot read it ({exc.strerror or exc}); skipped")
            return None
        if resolved in self._seen:
            # The user-level directory or a symlinked CLAUDE.md → AGENTS.md: the same text once is enough.
            return None
        text = self._read(path, home, "skipped")
        if text is None:
            return None
        self._seen.add(resolved)
        self.files.append(path)
        return self._expand(text, path, confine.resolve(), [resolved])

    def _read(self, path: Path, home: Path, consequence: str) -> str | None:
        try:
            # Nothing beyond the cap can reach the model, so there is no point reading more of a huge file.
            return confined.read_inside(path, (home,), CAP_BYTES)
        except OSError as exc:
            self.warnings.append(f"{path}: cannot read it ({exc.strerror or exc}); {consequence}")
            return None

    def _expand(self, text: str, path: Path, confine: Path, stack: list[Path]) -> str:
        """`text` (of `path`) with its import lines replaced by the imported files' text; `stack` holds the files
        being expanded, outermost first, to detect cycles."""
        out: list[str] = []
        fenced = False
        for line in text.splitlines(keepends=True):
            if _FENCE.match(line):
                fenced = not fenced
            match = None if fenced else _IMPORT_LINE.match(line)
            if match is None:
                out.append(line)
                continue
            imported = self._import(match.group(1), path, confine, stack)
            if imported is None:
                # Keep the author's line: the model may still follow the reference by hand.
                out.append(line)
            else:
                out.append(imported.rstrip("\n") + ("\n" if line.endswith("\n") else ""))
        return "".join(out)

    def _import(self, raw: str, importer: Path, confine: Path, stack: list[Path]) -> str | None:
        """The expanded text of the file `@raw` names, "" for one already included, or None when skipped."""

        def skip(problem: str) -> None:
            self.warnings.append(f"{importer}: @{raw}: {problem}; import skipped")

        if len(stack) > MAX_IMPORT_DEPTH:
            skip(f"imports nested more than {MAX_IMPORT_DEPTH} deep")
            return None
        if raw.startswith("~") or Path(raw).is_absolute():
            skip("only paths relative to the importing file are allowed")
            return None
        try:
            target = (importer.parent / raw).resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
            skip(f"cannot resolve it ({exc})")
            return None
        if target != confine and confine not in target.parents:
            skip(f"it is outside {confine}")
            return None
        if target in stack:
            chain = " -> ".join(p.name for p in [*stack[stack.index(target) :], target])
            skip(f"import cycle ({chain})")
            return None
        if target in self._seen:
            # Imported twice (two files share a fragment): once is enough, and not a mistake worth a warning.
            return ""
        try:
            found = target.exists()
        except OSError as exc:  # e.g. a directory on the way that we may not search
            skip(f"cannot reach it ({exc.strerror or exc})")
            return None
        if not found:
            skip("file not found")
            return None
        text = self._read(target, confine, "import skipped")
        if text is None:
            return None
        self._seen.add(target)
        self.imports.append(target)
        return self._expand(text, target, confine, [*stack, target])


def _upwards(start: Path) -> Iterator[Path]:
    directory = start
    while True:
        yield directory
        if directory.parent == directory:
            return
        directory = directory.parent
