"""`Knowledge`: what the agent knows before the first word, and the system prompt built from it.

Project instructions (AGENTS.md / CLAUDE.md), memory and the skills catalogue are loaded once per session; the
prompt is rebuilt only when the memory file changes, so the cached prompt prefix stays stable. A caller may
replace the base prompt (`--system-prompt`, the library's `system_prompt`) or add to it (`--append-system-prompt`):
the project's instructions, memory and skills follow either way — they are the user's own instructions.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

CATALOGUE_SHARE = 0.02
"""The skills catalogue may take about this share of the context window (as Claude Code and Codex do)."""
DEFAULT_WINDOW_TOKENS = 128_000


class Knowledge:
    """Project context, memory, skills, and the system prompt made of them."""

    def __init__(
        self,
        cwd: Path,
        env: Mapping[str, str],
        *,
        window_tokens: int = DEFAULT_WINDOW_TOKENS,
        base_prompt: str | None = None,
        append_prompt: str = "",
    ) -> None:
        from . import user_config_dir
        from .memory import Memory, find_memory_file
        from .project import load_project_context
        from .skills import discover_skills, skills_catalogue

        user_dir = user_config_dir(env)
        self.cwd = cwd
        self.project = load_project_context(cwd, user_dir=user_dir)
        self.skills, skill_warnings = discover_skills(cwd, user_dir=user_dir)
        self.memory = Memory(find_memory_file(cwd))
        self.catalogue = skills_catalogue(self.skills, budget_chars=int(window_tokens * 4 * CATALOGUE_SHARE))
        self.base_prompt = base_prompt
        """Replaces our base instructions when set (None: ours)."""
        self.append_prompt = append_prompt
        """Added at the end of the prompt."""
        self.warnings = [*self.project.warnings, *skill_warnings]
        self.system_prompt = self._build()

    def _build(self) -> str:
        from .system_prompt import BASE_PROMPT, build_system_prompt

        prompt = build_system_prompt(
            cwd=self.cwd,
            project=self.project,
            memory=self.memory,
            catalogue=self.catalogue,
            base=BASE_PROMPT if self.base_prompt is None else self.base_prompt,
        )
        if self.append_prompt:
            prompt = f"{prompt}\n\n{self.append_prompt}"
        if self.memory.warning:
            self.warnings.append(self.memory.warning)
        return prompt

    def agent_prompt(self, base: str, *, skills: bool) -> str:
        """A subagent's system prompt: its own instructions instead of ours, then the same environment, project
        instructions and memory (and the skills catalogue when it has the Skill tool)."""
        from .system_prompt import build_system_prompt

        catalogue = self.catalogue if skills else ""
        return build_system_prompt(
            cwd=self.cwd, project=self.project, memory=self.memory, catalogue=catalogue, base=base
        )

    def replace_prompts(self, base_prompt: str | None, append_prompt: str) -> str:
        """Rebuild the prompt with other base instructions (None: ours) and appended text (a client's
        `initialize` may carry them); the new prompt."""
        self.base_prompt, self.append_prompt = base_prompt, append_prompt
        self.system_prompt = self._build()
        return self.system_prompt

    def refreshed_prompt(self) -> str | None:
        """A new system prompt when the memory file changed since the last build, else None."""
        if not self.memory.changed():
            return None
        self.system_prompt = self._build()
        return self.system_prompt
