"""The task `/init` gives the agent — the same in every front end (`kit.commands` sends it): write or improve the
repository's AGENTS.md (or its CLAUDE.md, when that is what the project keeps), through the normal tools and
permissions.
"""

from __future__ import annotations

from pathlib import Path

INIT_PROMPT = """\
Write {target_action} for this repository: the file coding agents (and new contributors) read before they work \
here. {target_note}

1. Explore first, with read-only tools: the README, the build and package files (pyproject.toml, package.json, \
Cargo.toml, go.mod, Makefile, CI workflows...), the layout of the source and test folders, a few central modules, \
and any existing agent instructions (AGENTS.md, CLAUDE.md, .cursorrules, .cursor/rules/, \
.github/copilot-instructions.md) — fold what is still true in them into the result.
2. Find the exact commands to install dependencies, build, lint, format, type-check, run all tests and run a \
single test. Take them from the project's files and CI; do not guess them, and do not run the full test suite or \
anything slow or destructive to check them.
3. Write concise Markdown with:
   - one short paragraph on what the project is;
   - the commands above, in code blocks;
   - the architecture: the main parts and how a request or data flows through them — what takes reading \
several files to understand, not what a directory listing shows;
   - the conventions a newcomer would get wrong: style beyond what the linters enforce, naming, error handling, \
testing patterns, where new code goes, things never to do.
   Every line must be true of this repository and useful to someone changing it: no generic advice ("write \
tests", "handle errors"), no invented sections, no list of every file. Aim for well under 200 lines.
4. {target_write}
5. Finish with two or three sentences on what you wrote or changed.{notes}"""


def init_prompt(root: Path, notes: str) -> str:
    """The task `/init` gives the agent: AGENTS.md, or the project's CLAUDE.md when that is what it keeps."""
    agents, claude = root / "AGENTS.md", root / "CLAUDE.md"
    if agents.is_file():
        action, note = "an improved AGENTS.md", "AGENTS.md already exists: improve it rather than start over."
        write = (
            "Change AGENTS.md in place with Edit (read it first): keep what is right, fix what is outdated, "
            "add what is missing."
        )
    elif claude.is_file():
        action, note = (
            "an improved CLAUDE.md",
            "This project keeps its agent instructions in CLAUDE.md: improve that file.",
        )
        write = (
            "Change CLAUDE.md in place with Edit (read it first): keep what is right, fix what is outdated, "
            "add what is missing."
        )
    else:
        action, note = "AGENTS.md", "There is none yet."
        write = "Create AGENTS.md at the root of the workspace with Write, starting with the heading `# AGENTS.md`."
    extra = f"\n\nNotes from the user: {notes.strip()}" if notes.strip() else ""
    return INIT_PROMPT.format(target_action=action, target_note=note, target_write=write, notes=extra)
