"""The agent types a session offers: built-in ones, Claude Code's agent files, and a driving program's.

An agent file is Markdown with frontmatter — `name` (else the file's name), `description` (when to use it: the
model reads it), `tools` (a comma list of tool names; absent: every tool of the session), `model` (`inherit`, an
alias or a model id) — and its body is the agent's system prompt. Looked for, nearest first (the first agent with
a name wins, shadowing a built-in of that name too): `.agents/agents/*.md` then `.claude/agents/*.md` in the working
directory and each directory above it up to the repository root, then `agents/*.md` in the user's config directory.
They are read the first time the Agent tool is described to the model, not at startup, and only when they resolve
inside the project they were found in — the repository, or without one the directory above its `.claude/agents` —,
a user's inside the user's config directory (`context/confined.py`); one that is a link leading elsewhere is
skipped with one warning naming it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..context.confined import project_root, read_inside, resolve_inside
from ..context.frontmatter import read_fields
from ..context.project import search_levels
from ..context.skills import split_frontmatter

PROJECT_DIRS = (".agents/agents", ".claude/agents")
USER_DIR = "agents"
READ_CAP = 64 * 1024
Scope = Literal["built-in", "project", "user", "program"]


class AgentDefinition(msgspec.Struct, frozen=True):
    """One agent type."""

    name: str
    """What `subagent_type` names."""
    description: str
    prompt: str
    """Its system prompt (the project's instructions and memory follow it)."""
    tools: tuple[str, ...] | None = None
    """The tool names it gets (those the session has); None: all of the session's (never Agent)."""
    model: str = ""
    """`inherit` / empty: the session's model; else see `model_choice`."""
    read_only: bool = False
    """True: every call that does not only read is refused, whatever the permission mode (Explore)."""
    scope: Scope = "built-in"
    path: Path | None = None


GENERAL_PURPOSE = AgentDefinition(
    "general-purpose",
    "General-purpose agent for researching complex questions, searching for code, and executing multi-step tasks. "
    "When you are searching for a keyword or file and are not confident that you will find the right match in the "
    "first few tries, use this agent to perform the search for you.",
    """\
You are an agent of ram, a coding agent: the main agent gave you one task. Do it completely with the tools you \
have, then answer with a report of what you found or did.

- Search broadly when you do not know where something lives; read the files that matter; check what you change.
- Do not ask questions: nobody can answer them. When the task is ambiguous, choose the likeliest reading and say so.
- Your final message is the only thing the main agent sees (the user does not see it): include every file path, \
line number, name, command and result it needs, and say what you did not finish. No preamble.""",
)

EXPLORE = AgentDefinition(
    "Explore",
    'Fast read-only agent for exploring codebases: finding files by patterns ("src/components/**/*.tsx"), '
    'searching code for keywords ("API endpoints"), or answering questions about the codebase ("how do API '
    'endpoints work?"). Say how thorough it should be: "quick", "medium" or "very thorough".',
    """\
You are a read-only explorer working for ram, a coding agent: find what the main agent asked about, as fast as \
the requested thoroughness allows.

- Use Glob to find files by name, Grep to search contents, Read for the files that matter, and Bash only for \
read-only commands (git log, git diff, ls). You cannot change anything: calls that would are refused.
- Run independent searches in parallel (several tool calls in one message).
- Answer with what you found: file paths with line numbers, the relevant names and a short explanation. The main \
agent reads only your final message.""",
    tools=("Read", "Glob", "Grep", "Bash"),
    read_only=True,
)

BUILT_IN = (GENERAL_PURPOSE, EXPLORE)


def discover_agents(cwd: Path, user_dir: Path) -> tuple[list[AgentDefinition], list[str]]:
    """The agent files visible from `cwd`, nearest first, and one warning per problem; never raises."""
    levels, _, _ = search_levels(cwd.resolve())
    roots: list[tuple[Path, Scope]] = [(level / sub, "project") for level in reversed(levels) for sub in PROJECT_DIRS]
    roots.append((user_dir / USER_DIR, "user"))
    found: dict[str, AgentDefinition] = {}
    warnings: list[str] = []
    for root, scope in roots:
        home = user_dir if scope == "user" else project_root(root.parent.parent)
        try:
            files = sorted(root.glob("*.md")) if root.is_dir() and resolve_inside(root, (home,)) else []
        except OSError as exc:  # LeadsOutside too: the folder itself is a link out of the project
            warnings.append(f"{root}: cannot list it ({exc.strerror or exc}); its agents were skipped")
            continue
        for path in files:
            if path.name.startswith(".") or not path.is_file():
                continue
            agent = _load(path, scope, home, warnings)
            if agent is not None and agent.name not in found:
                found[agent.name] = agent
    return list(found.values()), warnings


def _load(path: Path, scope: Scope, home: Path, warnings: list[str]) -> AgentDefinition | None:
    try:
        text = read_inside(path, (home,), READ_CAP)
    except OSError as exc:
        warnings.append(f"{path}: cannot read it ({exc.strerror or exc}); agent skipped")
        return None
    frontmatter, body, _ = split_frontmatter(text)
    fields = read_fields(frontmatter, path, warnings) if frontmatter else {}
    name = fields.get("name", "").strip() or path.stem
    if not body.strip():
        warnings.append(f"{path}: the agent has no system prompt (its body is empty); agent skipped")
        return None
    description = " ".join(fields.get("description", "").replace("\\n", " ").split())
    return AgentDefinition(
        name,
        description or f"the {name} agent ({path.name})",
        body.strip(),
        _tool_names(fields.get("tools")),
        fields.get("model", "").strip(),
        scope=scope,
        path=path,
    )


def _tool_names(value: str | None) -> tuple[str, ...] | None:
    """`Read, Grep, Bash(git:*)` as tool names (a rule's parentheses are dropped); None: not restricted."""
    if value is None or not value.strip() or value.strip() == "*":
        return None
    names = [part.split("(", 1)[0].strip() for part in value.replace(";", ",").split(",")]
    return tuple(dict.fromkeys(name for name in names if name))


def program_agents(given: Mapping[str, Any]) -> tuple[list[AgentDefinition], list[str]]:
    """The agents a driving program defines (the SDK's `agents`: `{name: {description, prompt, tools, model}}`)."""
    out: list[AgentDefinition] = []
    warnings: list[str] = []
    for name, entry in given.items():
        if not isinstance(entry, Mapping) or not isinstance(entry.get("prompt"), str):
            warnings.append(f"agents: {name!r} needs a `prompt`; ignored")
            continue
        tools = entry.get("tools")
        names = tuple(str(t) for t in tools) if isinstance(tools, list) else None
        model = entry.get("model")
        description = entry.get("description")
        out.append(
            AgentDefinition(
                str(name),
                description if isinstance(description, str) and description else f"the {name} agent",
                entry["prompt"],
                names,
                model if isinstance(model, str) else "",
                scope="program",
            )
        )
    return out, warnings


class AgentCatalog:
    """A session's agent types, read the first time they are asked for."""

    def __init__(self, cwd: Path, env: Mapping[str, str]) -> None:
        self.cwd = cwd
        self.env = env
        self._found: list[AgentDefinition] | None = None
        self._given: list[AgentDefinition] = []
        self.warnings: list[str] = []

    @property
    def agents(self) -> list[AgentDefinition]:
        """Every agent type: the program's, the files', then the built-in ones they do not shadow."""
        if self._found is None:
            from ..context import user_config_dir

            self._found, self.warnings = discover_agents(self.cwd, user_config_dir(self.env))
        seen: dict[str, AgentDefinition] = {}
        for agent in (*self._given, *self._found, *BUILT_IN):
            seen.setdefault(agent.name, agent)
        return list(seen.values())

    def add(self, agents: list[AgentDefinition]) -> None:
        """Agents a driving program defines (they shadow the files' and the built-in ones)."""
        self._given += agents

    def find(self, name: str) -> AgentDefinition | None:
        agents = self.agents
        exact = next((a for a in agents if a.name == name), None)
        if exact is not None:
            return exact
        folded = [a for a in agents if a.name.casefold() == name.strip().casefold()]
        return folded[0] if len(folded) == 1 else None
