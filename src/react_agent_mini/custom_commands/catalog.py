"""Where custom commands come from, and what their files say about them.

Looked for, nearest first (the first command with a name wins): `.agents/commands/` then `.claude/commands/` in the
working directory and each directory above it up to the repository root (the levels project instructions come
from), then `commands/` in the user's config directory. Every `*.md` below them is a command; its path below the
commands directory, without `.md` and with `/` as `:`, is its name (`git/commit.md` is `/git:commit`; `/commit`
names it too while no other command ends in `commit`, as Claude Code names it). Hidden files and directories are
skipped. The body is read again when the command runs, so an edited file takes effect at once.

A command file is read (at discovery and when it runs) only when it resolves inside the project it was found in —
the repository, or without one the directory above its `.claude/commands` —, a user's command inside the user's
config directory (`context/confined.py`); one that is a link leading elsewhere is no command, with one warning
naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import msgspec

from ..context import user_config_dir
from ..context.confined import LeadsOutside, project_root, read_inside, resolve_inside
from ..context.frontmatter import read_fields
from ..context.project import search_levels
from ..context.skills import split_frontmatter

PROJECT_DIRS = (".agents/commands", ".claude/commands")
USER_DIR = "commands"
READ_CAP = 64 * 1024
"""Bytes of a command file read (its frontmatter at discovery, its body when it runs)."""
MAX_FILES = 500
"""Commands found at most per directory (a `commands` directory that is really something else stays cheap)."""
DESCRIPTION_CHARS = 120


class CustomCommand(msgspec.Struct, frozen=True):
    """One command file."""

    name: str
    """What follows the `/`: `review`, `frontend:component`."""
    path: Path
    description: str = ""
    """The frontmatter's, else the body's first line."""
    argument_hint: str = ""
    """`argument-hint`: shown after the name in listings (`[file] [focus]`)."""
    allowed_tools: tuple[str, ...] = ()
    """`allowed-tools`: permission rules allowed without asking during this command's turn."""
    model: str = ""
    """`model`: the model this command's turn uses (empty: the session's)."""
    scope: Literal["project", "user"] = "project"


def discover_commands(cwd: Path, user_dir: Path) -> tuple[list[CustomCommand], list[str]]:
    """The commands visible from `cwd`, sorted by name, and one warning per problem; never raises."""
    levels, _, _ = search_levels(cwd.resolve())
    roots: list[tuple[Path, Literal["project", "user"]]] = [
        (level / sub, "project") for level in reversed(levels) for sub in PROJECT_DIRS
    ]
    roots.append((user_dir / USER_DIR, "user"))
    found: dict[str, CustomCommand] = {}
    warnings: list[str] = []
    for root, scope in roots:
        home = user_dir if scope == "user" else project_root(root.parent.parent)
        for path in _command_files(root, home, warnings):
            name = ":".join(path.relative_to(root).with_suffix("").parts)
            if name not in found and " " not in name:
                command = _load(path, name, scope, home, warnings)
                if command is not None:
                    found[name] = command
    return sorted(found.values(), key=lambda c: c.name), warnings


def _command_files(root: Path, home: Path, warnings: list[str]) -> list[Path]:
    """The command files below `root` (none when `root` itself leads outside `home`: one warning says so)."""
    try:
        if not root.is_dir():
            return []
        resolve_inside(root, (home,))
        files = []
        for path in sorted(root.rglob("*.md")):
            relative = path.relative_to(root)
            if any(part.startswith(".") for part in relative.parts) or not path.is_file():
                continue
            files.append(path)
            if len(files) >= MAX_FILES:
                warnings.append(f"{root}: more than {MAX_FILES} command files; the rest were skipped")
                break
        return files
    except OSError as exc:
        warnings.append(f"{root}: cannot list it ({exc.strerror or exc}); its commands were skipped")
        return []


def _load(
    path: Path, name: str, scope: Literal["project", "user"], home: Path, warnings: list[str]
) -> CustomCommand | None:
    """The command in `path` (None: a link leading outside `home`, skipped with a warning)."""
    try:
        text = read_inside(path, (home,), READ_CAP)
    except LeadsOutside as exc:
        warnings.append(f"{path}: cannot read it ({exc.strerror}); command skipped")
        return None
    except OSError as exc:
        warnings.append(f"{path}: cannot read it ({exc.strerror or exc})")
        return CustomCommand(name, path, scope=scope)
    frontmatter, body, _ = split_frontmatter(text)
    fields = read_fields(frontmatter, path, warnings) if frontmatter else {}
    description = fields.get("description", "") or _first_line(body)
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return CustomCommand(
        name,
        path,
        description,
        fields.get("argument-hint", ""),
        tuple(_rules(fields.get("allowed-tools", ""))),
        fields.get("model", ""),
        scope,
    )


def _first_line(body: str) -> str:
    for line in body.splitlines():
        line = line.strip().lstrip("#").strip()
        if line:
            return line
    return ""


def _rules(value: str) -> list[str]:
    from ..permissions.rules import split_rule_list

    return split_rule_list(value)


def read_body(command: CustomCommand) -> str:
    """The command's text without its frontmatter (OSError when the file cannot be read, or now leads outside the
    place it was found in)."""
    _, body, _ = split_frontmatter(read_inside(command.path, (_home(command),), READ_CAP))
    return body.strip("\n")


def _home(command: CustomCommand) -> Path:
    """Where `command`'s file may resolve: the user's config directory, or the project holding the
    `.agents/commands` / `.claude/commands` directory it is in."""
    if command.scope == "user":
        return user_config_dir()
    for folder in command.path.parents:
        if any(folder / sub in command.path.parents for sub in PROJECT_DIRS):
            return project_root(folder)
    return project_root(command.path.parent)


class CommandCatalog:
    """A session's custom commands, found the first time they are asked for."""

    def __init__(self, cwd: Path, env: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.env = env
        self._found: list[CustomCommand] | None = None
        self.warnings: list[str] = []
        """Problems found while looking (after the first look)."""

    @property
    def commands(self) -> list[CustomCommand]:
        if self._found is None:
            from ..context import user_config_dir

            self._found, self.warnings = discover_commands(self.cwd, user_config_dir(self.env))
        return self._found

    def find(self, name: str) -> CustomCommand | None:
        """The command `name` names: its full name (`frontend:component`), or the last part of one when only one
        command ends so (`component`, as Claude Code names the commands of subfolders)."""
        exact = next((c for c in self.commands if c.name == name), None)
        if exact is not None or not name or ":" in name:
            return exact
        short = [c for c in self.commands if c.name.rpartition(":")[2] == name]
        return short[0] if len(short) == 1 else None
