"""Skill: load a skill's instructions into the conversation when the model asks for one.

The tool_result is only a short `Launching skill: <id>`; the instructions travel in `ToolOutput.after`, which the
loop places after this call's tool_result in the same user message. That order keeps every tool_use answered
first (the upstream put the body before the result, and DeepSeek rejected the request with a 400). The body is
read from disk when loaded (discovery read only the frontmatter), so an edited SKILL.md takes effect at once.
The tool remembers which skills were loaded, so compaction can load them again after a summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import msgspec

from ...context.skills import Skill, read_skill_body
from ...messages import TextBlock
from ..base import ModelTool, ToolContext, ToolOutput


class SkillArgs(msgspec.Struct):
    skill: Annotated[
        str,
        msgspec.Meta(
            min_length=1, description="The id of the skill to load, as listed under Skills in the system prompt."
        ),
    ]
    args: Annotated[
        str | None,
        msgspec.Meta(description="Optional arguments for the skill, e.g. what the user wrote after `/<skill id>`."),
    ] = None


def skill_block(skill: Skill, args: str | None = None) -> TextBlock:
    """What the model reads when `skill` is loaded: its directory, the arguments when given, and its body (capped).
    Raises OSError when the SKILL.md cannot be read."""
    body = read_skill_body(skill)
    lines = [f"Base directory for this skill: {skill.base_dir}"]
    if args and args.strip():
        lines.append(f"Arguments: {args.strip()}")
    return TextBlock("\n".join(lines) + "\n\n" + body)


class SkillTool(ModelTool[SkillArgs]):
    name = "Skill"
    description = (
        "Load a skill: instructions for a specific kind of task, listed under Skills in the system prompt. Call it "
        "when the user's request matches a skill's description or the user names a skill (`/<id>`), before doing "
        "the task, passing the skill's id and, in args, any arguments the user gave. The result only confirms the "
        "launch; the skill's instructions and its base directory (for files the skill refers to) follow it in the "
        "same message. Follow them. Do not load a skill that is already loaded in this conversation."
    )
    args_model = SkillArgs
    read_only = True
    # Loads run one at a time, so `loaded` keeps the order the model asked for.
    concurrency_safe = False
    status_field = "skill"
    text_fields = frozenset({"args"})

    def __init__(self, skills: Sequence[Skill]) -> None:
        self._skills: dict[str, Skill] = {}
        for skill in skills:
            self._skills.setdefault(skill.id, skill)
        self.loaded: list[str] = []
        """Ids of the skills loaded in this session, least recently loaded first, each once."""
        self.loaded_args: dict[str, str | None] = {}
        """The arguments each loaded skill was last loaded with."""

    @property
    def skills(self) -> list[Skill]:
        """Every skill this tool can load, in catalogue order."""
        return list(self._skills.values())

    def find(self, query: str) -> Skill | None:
        """The skill `query` names: its id, else (ignoring case and a leading `/`) its id or its name."""
        if query in self._skills:
            return self._skills[query]
        wanted = query.strip().lstrip("/").casefold()
        by_id = [s for s in self._skills.values() if s.id.casefold() == wanted]
        if len(by_id) == 1:
            return by_id[0]
        by_name = [s for s in self._skills.values() if s.name.casefold() == wanted]
        return by_name[0] if len(by_name) == 1 else None

    def load(self, query: str, args: str | None = None) -> ToolOutput:
        """Load a skill (also for a `/<skill>` typed by the user): the launch line, and the body as an `after`."""
        skill = self.find(query)
        if skill is None:
            if not self._skills:
                return ToolOutput(f"Unknown skill: {query}. No skills are available in this session.", is_error=True)
            ids = ", ".join(self._skills)
            return ToolOutput(f"Unknown skill: {query}. Available skills: {ids}", is_error=True)
        try:
            block = skill_block(skill, args)
        except OSError as exc:
            return ToolOutput(f"Cannot load skill {skill.id}: {skill.path}: {exc.strerror or exc}", is_error=True)
        if skill.id in self.loaded:
            self.loaded.remove(skill.id)
        self.loaded.append(skill.id)
        self.loaded_args[skill.id] = args
        return ToolOutput(f"Launching skill: {skill.id}", after=(block,))

    def reload_blocks(self) -> list[TextBlock]:
        """The instructions of every loaded skill, read again, in load order (for re-injection after a summary);
        a skill whose file has gone is left out."""
        blocks: list[TextBlock] = []
        for skill_id in self.loaded:
            try:
                blocks.append(skill_block(self._skills[skill_id], self.loaded_args.get(skill_id)))
            except OSError:
                continue
        return blocks

    def reset(self) -> None:
        """Forget what was loaded (`/clear`)."""
        self.loaded.clear()
        self.loaded_args.clear()

    async def call(self, args: SkillArgs, ctx: ToolContext) -> ToolOutput:
        return self.load(args.skill, args.args)
