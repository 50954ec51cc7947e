"""The Skill tool: its result and after-block, unknown skills, what it remembers, and its place in the loop."""

from __future__ import annotations

from pathlib import Path

from react_agent_mini.abort import AbortSignal
from react_agent_mini.context.skills import BODY_CAP_BYTES, BODY_TRUNCATION_NOTE, discover_skills
from react_agent_mini.events import Terminal
from react_agent_mini.loop import QueryDeps, QueryParams, query
from react_agent_mini.messages import TextBlock, ToolResultBlock, user_text
from react_agent_mini.providers.openai_compat import to_openai_messages
from react_agent_mini.tools.base import ToolContext, ToolRegistry
from react_agent_mini.tools.builtin.echo import EchoTool
from react_agent_mini.tools.builtin.skill import SkillTool

from ..scripted import ScriptedModel, call, reply


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def project(tmp_path: Path) -> tuple[Path, SkillTool]:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(root / ".agents/skills/review/SKILL.md", "---\ndescription: Review a change\n---\n# Review workflow\n")
    write(root / ".claude/skills/teach/SKILL.md", "---\nname: Teacher\n---\nTeach gently.")
    skills, warnings = discover_skills(root, user_dir=tmp_path / "user")
    assert warnings == []
    return root, SkillTool(skills)


def test_shape_of_the_tool(tmp_path: Path) -> None:
    _, tool = project(tmp_path)
    assert tool.name == "Skill"
    assert tool.read_only is True
    assert tool.concurrency_safe is False
    schema = tool.input_schema()
    assert schema["required"] == ["skill"]
    assert set(schema["properties"]) == {"skill", "args"}
    assert tool.describe_call({"skill": "review"}) == "review"


async def test_loading_returns_a_short_result_and_the_body_after_it(tmp_path: Path) -> None:
    root, tool = project(tmp_path)
    out = await tool.call(tool.validate({"skill": "review", "args": "  src/app.py  "}), ToolContext(cwd=root))
    assert out.content == "Launching skill: review"
    assert not out.is_error
    assert out.after == (
        TextBlock(
            f"Base directory for this skill: {root / '.agents/skills/review'}\n"
            "Arguments: src/app.py\n\n"
            "# Review workflow"
        ),
    )


async def test_without_args_there_is_no_arguments_line(tmp_path: Path) -> None:
    root, tool = project(tmp_path)
    for raw in ({"skill": "teach"}, {"skill": "teach", "args": "   "}):
        out = await tool.call(tool.validate(raw), ToolContext(cwd=root))
        [block] = out.after
        assert isinstance(block, TextBlock)
        assert block.text == f"Base directory for this skill: {root / '.claude/skills/teach'}\n\nTeach gently."


async def test_unknown_skill_is_an_error_listing_the_ids(tmp_path: Path) -> None:
    root, tool = project(tmp_path)
    out = await tool.call(tool.validate({"skill": "missing"}), ToolContext(cwd=root))
    assert out.is_error
    assert out.content == "Unknown skill: missing. Available skills: review, teach"
    assert out.after == ()
    assert tool.loaded == []
    empty = SkillTool([])
    out = await empty.call(empty.validate({"skill": "x"}), ToolContext(cwd=root))
    assert out.is_error
    assert "No skills are available" in out.content


def test_lookup_forgives_case_a_slash_and_the_display_name(tmp_path: Path) -> None:
    _, tool = project(tmp_path)
    assert tool.load("/Review").content == "Launching skill: review"
    assert tool.load("teacher").content == "Launching skill: teach"


def test_loaded_skills_are_remembered_in_order_once_each(tmp_path: Path) -> None:
    _, tool = project(tmp_path)
    tool.load("review", "first")
    tool.load("teach")
    tool.load("review", "again")
    tool.load("nope")
    assert tool.loaded == ["teach", "review"]
    blocks = tool.reload_blocks()
    assert [b.text.rsplit("\n", 1)[-1] for b in blocks] == ["Teach gently.", "# Review workflow"]
    assert "Arguments: again" in blocks[1].text
    tool.reset()
    assert tool.loaded == []
    assert tool.reload_blocks() == []


def test_body_is_read_when_loaded(tmp_path: Path) -> None:
    root, tool = project(tmp_path)
    path = root / ".agents/skills/review/SKILL.md"
    write(path, "---\ndescription: changed\n---\nNew steps")
    [block] = tool.load("review").after
    assert isinstance(block, TextBlock)
    assert block.text.endswith("\n\nNew steps")
    path.unlink()
    out = tool.load("review")
    assert out.is_error
    assert out.content.startswith(f"Cannot load skill review: {path}")


def test_body_is_capped(tmp_path: Path) -> None:
    root, tool = project(tmp_path)
    write(root / ".agents/skills/review/SKILL.md", "z" * (BODY_CAP_BYTES * 3))
    [block] = tool.load("review").after
    assert isinstance(block, TextBlock)
    assert block.text.endswith(BODY_TRUNCATION_NOTE)
    body = block.text.split("\n\n", 1)[1]
    assert len(body.encode()) <= BODY_CAP_BYTES


async def test_in_the_loop_the_body_follows_the_tool_result(tmp_path: Path) -> None:
    root, tool = project(tmp_path)
    model = ScriptedModel(
        [reply(call("Skill", "s1", skill="review"), call("Echo", "e1", message="hi")), reply("Reviewed.")]
    )
    params = QueryParams(
        messages=[user_text("review my change")],
        tools=ToolRegistry([EchoTool(), tool]),
        context=ToolContext(cwd=root),
        system="sys",
        max_turns=5,
        signal=AbortSignal(),
    )
    events = [e async for e in query(params, QueryDeps(call_model=model))]
    assert isinstance(events[-1], Terminal)
    assert events[-1].reason == "completed"
    answer = model.requests[1].messages[-1]
    assert answer.role == "user"
    assert answer.content[:2] == (
        ToolResultBlock("s1", "Launching skill: review"),
        ToolResultBlock("e1", "hi"),
    )
    [body] = answer.content[2:]
    assert isinstance(body, TextBlock)
    assert body.text.endswith("# Review workflow")
    # On the OpenAI-compatible wire: every tool message comes straight after the tool_calls, then the body.
    wire = to_openai_messages("sys", model.requests[1].messages)
    assert [m["role"] for m in wire] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert tool.loaded == ["review"]
