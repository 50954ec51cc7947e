"""Skills: task-specific instructions in `SKILL.md` files, listed in the system prompt, loaded on demand.

Discovery happens once at start. Each immediate subdirectory holding a `SKILL.md` is a skill whose id is the
directory name. Looked for, in this order (the first skill with a given id wins, so nearer ones shadow others):
1. `.agents/skills/*/SKILL.md` then `.claude/skills/*/SKILL.md` in the working directory, then in each directory
   above it up to the repository root (the levels the project context is read from);
2. `skills/*/SKILL.md` in the user's config directory.

A SKILL.md may start with YAML frontmatter between `---` lines; `name` and `description` are used, other keys
ignored. Broken frontmatter gives a warning naming the file and the skill still loads (id as name, no
description). The system prompt carries only the catalogue (id, name, description) within a character budget;
the Skill tool reads the body when the model asks for it (progressive disclosure).

A SKILL.md is read (at discovery and again when loaded) only when it resolves inside the project it was found in —
the repository, or without one the directory above its `.agents/skills` —, a user's skill inside the user's config
directory (`confined.py`); a skill that is a link leading elsewhere is skipped with one warning naming it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from .confined import project_root, read_inside, resolve_inside
from .project import cap_utf8, search_levels

TYPE_CHECKING = False  # not typing's: the first request is built before typing is imported (`early/`)
if TYPE_CHECKING:
    from typing import Any, Literal

SKILL_FILE = "SKILL.md"
PROJECT_SKILL_DIRS = (".agents/skills", ".claude/skills")
"""Where a project's skills live, relative to each searched directory, in this order."""
USER_SKILL_DIR = "skills"
"""Where the user's own skills live, relative to the user's config directory."""
BODY_CAP_BYTES = 32 * 1024
"""The most UTF-8 bytes of a skill body given to the model."""
BODY_TRUNCATION_NOTE = "\n\n[skill truncated at 32KB]"
DISCOVERY_READ_BYTES = 64 * 1024
"""How much of a SKILL.md discovery reads: frontmatter sits at the top, the body is read only when loaded."""
DESCRIPTION_CHARS = 300
"""A catalogue entry's description is cut here, so one long description cannot crowd out the other skills."""

CATALOGUE_HEADER = (
    "# Skills\n"
    "Skills are instructions for specific kinds of tasks, loaded on demand. When the user's request matches a "
    "skill below (or the user names one, e.g. `/review`), call the Skill tool with its id, and with `args` if the "
    "user gave any, before doing the task; the skill's instructions arrive right after the tool result. Do not load "
    "a skill that is already loaded in this conversation.\n"
)

_OPEN = re.compile(r"\A---[ \t]*\r?\n")
_CLOSE = re.compile(r"^---[ \t]*(?:\r?\n|\Z)", re.MULTILINE)


class Skill:
    """One discovered skill (its body is read when it is loaded, not at discovery). A plain class, not a msgspec
    struct: the first request is built before msgspec is imported (`early/`)."""

    __slots__ = ("base_dir", "description", "id", "name", "path", "scope")

    def __init__(
        self,
        id: str,
        name: str,
        description: str,
        path: Path,
        base_dir: Path,
        scope: Literal["project", "user"] = "project",
    ) -> None:
        self.id = id
        """What the model passes to the Skill tool: the skill's directory name."""
        self.name = name
        """The frontmatter `name`, or the id when there is none."""
        self.description = description
        """The frontmatter `description` (whitespace collapsed), or empty."""
        self.path = path
        """The SKILL.md file."""
        self.base_dir = base_dir
        """The skill's directory, told to the model so it can find the skill's other files."""
        self.scope: Literal["project", "user"] = scope
        """Where it was found: the project's skill directories or the user's config directory."""

    def _key(self) -> tuple[object, ...]:
        return (self.id, self.name, self.description, self.path, self.base_dir, self.scope)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Skill) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"Skill(id={self.id!r}, name={self.name!r}, path={self.path!r}, scope={self.scope!r})"


def discover_skills(cwd: Path, *, user_dir: Path) -> tuple[list[Skill], list[str]]:
    """The skills visible from `cwd`, in catalogue order, and one warning line per problem; never raises."""
    levels, _, _ = search_levels(cwd.resolve())
    roots: list[tuple[Path, Literal["project", "user"]]] = [
        (directory / sub, "project") for directory in reversed(levels) for sub in PROJECT_SKILL_DIRS
    ]
    roots.append((user_dir / USER_SKILL_DIR, "user"))
    skills: list[Skill] = []
    warnings: list[str] = []
    ids: set[str] = set()
    for root, scope in roots:
        for skill_dir in _skill_dirs(root, _root_home(root, scope), warnings):
            if skill_dir.name in ids:
                continue  # shadowed by a nearer skill with the same id
            skill = _load_skill(skill_dir, scope, warnings)
            if skill is not None:
                ids.add(skill.id)
                skills.append(skill)
    return skills, warnings


def skills_catalogue(skills: Sequence[Skill], *, budget_chars: int) -> str:
    """The system prompt's skills section: a header and one line per skill, within about `budget_chars`
    characters; skills that do not fit are counted in a closing note. Empty when there are no skills."""
    if not skills:
        return ""
    lines = [_catalogue_line(skill) for skill in skills]
    # The most lines that fit together with the note counting the rest (skills come in priority order).
    shown = 0
    used = len(CATALOGUE_HEADER)
    for count in range(len(lines) + 1):
        left_out = len(lines) - count
        if used + (len(_left_out_note(left_out)) if left_out else 0) <= budget_chars:
            shown = count
        if count == len(lines):
            break
        used += len(lines[count])
        if used > budget_chars:
            break
    text = CATALOGUE_HEADER + "".join(lines[:shown])
    if shown < len(lines):
        text += _left_out_note(len(lines) - shown)
    return text


def read_skill_body(skill: Skill) -> str:
    """The skill's instructions (the SKILL.md without its frontmatter), capped at 32 KB with a note.
    Raises OSError when the file cannot be read."""
    text = read_inside(skill.path, (_home(skill.base_dir, skill.scope),), BODY_CAP_BYTES + DISCOVERY_READ_BYTES)
    _, body, _ = split_frontmatter(text)
    capped, _ = cap_utf8(body.strip("\n").rstrip(), BODY_CAP_BYTES, BODY_TRUNCATION_NOTE)
    return capped


def split_frontmatter(text: str) -> tuple[str | None, str, bool]:
    """(frontmatter or None, body, closed): an opening `---` without a closing one counts as no frontmatter
    (the whole text is the body) with `closed` False."""
    opening = _OPEN.match(text)
    if opening is None:
        return None, text, True
    closing = _CLOSE.search(text, opening.end())
    if closing is None:
        return None, text, False
    return text[opening.end() : closing.start()], text[closing.end() :], True


def _skill_dirs(root: Path, home: Path, warnings: list[str]) -> list[Path]:
    """The subdirectories of `root` that hold a SKILL.md, sorted by name (a missing root is normal; one that leads
    outside `home` is skipped with a warning)."""
    try:
        if not root.is_dir():
            return []
        resolve_inside(root, (home,))
        entries = sorted(root.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        warnings.append(f"{root}: cannot list it ({exc.strerror or exc}); its skills were skipped")
        return []
    found: list[Path] = []
    for entry in entries:
        # Hidden entries are editor and VCS leftovers, not skills.
        if entry.name.startswith("."):
            continue
        try:
            if entry.is_dir() and (entry / SKILL_FILE).exists():
                found.append(entry)
        except OSError:
            continue
    return found


def _load_skill(skill_dir: Path, scope: Literal["project", "user"], warnings: list[str]) -> Skill | None:
    path = skill_dir / SKILL_FILE
    try:
        text = read_inside(path, (_home(skill_dir, scope),), DISCOVERY_READ_BYTES)
    except OSError as exc:
        warnings.append(f"{path}: cannot read it ({exc.strerror or exc}); skill skipped")
        return None
    frontmatter, _, closed = split_frontmatter(text)
    fields: dict[str, Any] = {}
    if not closed:
        warnings.append(f"{path}: frontmatter has no closing `---` line; loaded without name or description")
    elif frontmatter is not None and frontmatter.strip():
        fields = parse_frontmatter(frontmatter, path, warnings)
    skill_id = skill_dir.name
    name = text_field(fields, "name", path, warnings) or skill_id
    description = text_field(fields, "description", path, warnings)
    return Skill(skill_id, name, description, path, skill_dir, scope)


def _home(skill_dir: Path, scope: Literal["project", "user"]) -> Path:
    """Where the SKILL.md of `skill_dir` may resolve: the project holding `<dir>/.agents/skills/<id>` (or
    `.claude/skills`), or the user's config directory holding `skills/<id>`."""
    return _root_home(skill_dir.parent, scope)


def _root_home(root: Path, scope: Literal["project", "user"]) -> Path:
    """Where the skills directory `root` (`<dir>/.agents/skills`, or the user's `skills`) and its skills may lead."""
    return root.parent if scope == "user" else project_root(root.parent.parent)


def parse_frontmatter(
    raw: str, path: Path, warnings: list[str], ignored: str = "loaded without name or description"
) -> dict[str, Any]:
    """The YAML mapping between the `---` lines; {} (and a warning ending in `ignored`) when it is not one."""
    # Imported here: most sessions have no skills, and the parser is the heaviest import on the startup path.
    import yaml

    try:
        data = yaml.safe_load(raw)
    except yaml.MarkedYAMLError as exc:
        # +2: the mark counts from 0 within the frontmatter, which starts on the file's second line.
        where = f"line {exc.problem_mark.line + 2}: " if exc.problem_mark is not None else ""
        problem = " ".join(str(exc.problem or exc.context or "invalid YAML").split())
        warnings.append(f"{path}: broken YAML frontmatter ({where}{problem}); {ignored}")
        return {}
    except Exception as exc:  # the parser's other failures (e.g. nesting too deep) must not stop the session
        warnings.append(f"{path}: broken YAML frontmatter ({exc}); {ignored}")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        warnings.append(f"{path}: frontmatter is a YAML {type(data).__name__}, not a mapping of keys; {ignored}")
        return {}
    return data


def text_field(fields: dict[str, Any], key: str, path: Path, warnings: list[str]) -> str:
    value = fields.get(key)
    if value is None:
        return ""
    # YAML reads `name: 2024` as a number; that is still a usable label. A list or mapping is not.
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        warnings.append(f"{path}: frontmatter `{key}` should be text, not a YAML {type(value).__name__}; ignored")
        return ""
    return " ".join(str(value).split())


def _catalogue_line(skill: Skill) -> str:
    label = skill.id if skill.name == skill.id else f"{skill.id} ({skill.name})"
    description = skill.description
    if len(description) > DESCRIPTION_CHARS:
        description = description[: DESCRIPTION_CHARS - 1].rstrip() + "…"
    return f"- {label}: {description}\n" if description else f"- {label}\n"


def _left_out_note(count: int) -> str:
    noun = "skill" if count == 1 else "skills"
    return (
        f"({count} more {noun} not listed here, to keep this list short. If none above fits, the Skill tool's "
        "answer to an unknown id lists every id.)\n"
    )
