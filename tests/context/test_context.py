"""Project context, skills discovery and catalogue, memory, and the system prompt, on real files in tmp_path."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from react_agent_mini.context import user_config_dir
from react_agent_mini.context.memory import CAP_BYTES as MEMORY_CAP
from react_agent_mini.context.memory import MEMORY_FILE, Memory, find_memory_file
from react_agent_mini.context.project import (
    CAP_BYTES,
    SEPARATOR,
    TRUNCATION_NOTE,
    ProjectContext,
    find_repo_root,
    load_project_context,
)
from react_agent_mini.context.skills import (
    BODY_CAP_BYTES,
    BODY_TRUNCATION_NOTE,
    CATALOGUE_HEADER,
    Skill,
    discover_skills,
    read_skill_body,
    skills_catalogue,
)
from react_agent_mini.context.system_prompt import BASE_PROMPT, build_system_prompt


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def repo(tmp_path: Path) -> Path:
    """A repository root (holds `.git`) inside tmp_path, with a parent that has context files of its own."""
    write(tmp_path / "AGENTS.md", "ABOVE THE REPOSITORY")
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    return tmp_path / "config" / "react-agent-mini"


# --- user_config_dir ---------------------------------------------------------------------------------------------


def test_user_config_dir_follows_xdg_and_ignores_relative_values(tmp_path: Path) -> None:
    assert user_config_dir({"XDG_CONFIG_HOME": str(tmp_path / "x")}) == tmp_path / "x" / "react-agent-mini"
    assert user_config_dir({"HOME": str(tmp_path)}) == tmp_path / ".config" / "react-agent-mini"
    relative = {"XDG_CONFIG_HOME": "relative/dir", "HOME": str(tmp_path)}
    assert user_config_dir(relative) == tmp_path / ".config" / "react-agent-mini"


# --- project context: discovery ----------------------------------------------------------------------------------


def test_single_agents_md_is_the_context(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "Project rules\n- run `make test`\n")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "Project rules\n- run `make test`"
    assert ctx.files == (root / "AGENTS.md",)
    assert ctx.warnings == ()
    assert ctx.root == root


def test_both_names_at_one_level_agents_first(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "CLAUDE.md", "claude rules")
    write(root / "AGENTS.md", "agents rules")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "agents rules" + SEPARATOR + "claude rules"
    assert ctx.files == (root / "AGENTS.md", root / "CLAUDE.md")


def test_every_level_from_root_down_to_cwd_nearest_last(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "pkg" / "src"
    cwd.mkdir(parents=True)
    write(root / "AGENTS.md", "root")
    write(root / "pkg" / "CLAUDE.md", "pkg claude")
    write(root / "pkg" / "AGENTS.md", "pkg agents")
    write(cwd / "AGENTS.md", "src")
    ctx = load_project_context(cwd, user_dir=user_dir)
    assert ctx.text == SEPARATOR.join(["root", "pkg agents", "pkg claude", "src"])
    assert ctx.files == (root / "AGENTS.md", root / "pkg/AGENTS.md", root / "pkg/CLAUDE.md", cwd / "AGENTS.md")


def test_nothing_above_the_repository_root_is_read(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "sub"
    cwd.mkdir()
    write(cwd / "CLAUDE.md", "sub rules")
    ctx = load_project_context(cwd, user_dir=user_dir)
    assert "ABOVE THE REPOSITORY" not in ctx.text
    assert ctx.text == "sub rules"
    assert ctx.root == root


def test_a_git_file_marks_the_root_too(tmp_path: Path, user_dir: Path) -> None:
    # worktrees and submodules have a `.git` file, not a directory
    root = tmp_path / "worktree"
    write(root / ".git", "gitdir: /elsewhere\n")
    write(root / "AGENTS.md", "worktree rules")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "worktree rules"
    assert find_repo_root(root) == root


def test_without_a_repository_at_most_five_levels_up(tmp_path: Path, user_dir: Path) -> None:
    levels = [tmp_path / "l0"]
    for i in range(1, 8):
        levels.append(levels[-1] / f"l{i}")
    cwd = levels[-1]
    cwd.mkdir(parents=True)
    for level in levels:
        write(level / "AGENTS.md", f"from {level.name}")
    ctx = load_project_context(cwd, user_dir=user_dir)
    # cwd is l7; five ancestors reach l2; l1, l0 and everything above stay out
    assert ctx.text == SEPARATOR.join(f"from l{i}" for i in range(2, 8))
    assert ctx.root == levels[2]


def test_user_level_file_comes_first(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "project")
    write(user_dir / "AGENTS.md", "personal")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "personal" + SEPARATOR + "project"
    assert ctx.files[0] == user_dir / "AGENTS.md"


def test_no_files_means_empty_context_and_no_warnings(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx == ProjectContext(root=root)


def test_empty_files_add_no_separator(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "  \n\n")
    write(root / "CLAUDE.md", "claude")
    assert load_project_context(root, user_dir=user_dir).text == "claude"


def test_symlinked_claude_md_is_read_once(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "shared rules")
    (root / "CLAUDE.md").symlink_to("AGENTS.md")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "shared rules"


def test_unreadable_context_file_is_a_warning_naming_it(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    (root / "AGENTS.md").mkdir()  # exists, cannot be read as a file
    write(root / "CLAUDE.md", "still here")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "still here"
    assert len(ctx.warnings) == 1
    assert str(root / "AGENTS.md") in ctx.warnings[0]


def test_invalid_utf8_is_read_with_replacement_characters(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    (root / "AGENTS.md").write_bytes(b"caf\xe9 rules")
    assert load_project_context(root, user_dir=user_dir).text == "caf\ufffd rules"


# --- project context: @imports ------------------------------------------------------------------------------------


def test_import_line_is_replaced_by_the_file_relative_to_the_importer(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "app"
    write(cwd / "CLAUDE.md", "Intro\n@docs/style.md\nOutro\n")
    write(cwd / "docs" / "style.md", "Use tabs.\n")
    ctx = load_project_context(cwd, user_dir=user_dir)
    assert ctx.text == "Intro\nUse tabs.\nOutro"
    assert ctx.imports == (cwd / "docs" / "style.md",)
    assert ctx.warnings == ()


def test_nested_imports_resolve_relative_to_each_file(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "top\n@docs/a.md")
    write(root / "docs" / "a.md", "a begins\n  @../shared/b.md  \na ends")
    write(root / "shared" / "b.md", "b text")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "top\na begins\nb text\na ends"
    assert ctx.imports == (root / "docs/a.md", root / "shared/b.md")


def test_only_whole_import_lines_outside_code_fences_import(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "x.md", "X CONTENT")
    text = "Mention @x.md inline stays.\n```\n@x.md\n```\n~~~md\n@x.md\n~~~\n"
    write(root / "AGENTS.md", text)
    ctx = load_project_context(root, user_dir=user_dir)
    assert "X CONTENT" not in ctx.text
    assert ctx.text == text.rstrip()
    assert ctx.warnings == ()


def test_import_outside_the_repository_is_refused(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(tmp_path / "secret.md", "SECRET")
    write(root / "AGENTS.md", "rules\n@../secret.md\n@/etc/hostname\n@~/notes.md")
    ctx = load_project_context(root, user_dir=user_dir)
    assert "SECRET" not in ctx.text
    # the author's lines stay, so the text still reads as written
    assert ctx.text == "rules\n@../secret.md\n@/etc/hostname\n@~/notes.md"
    assert len(ctx.warnings) == 3
    assert all(w.startswith(f"{root / 'AGENTS.md'}: @") for w in ctx.warnings)
    assert "outside" in ctx.warnings[0]


def test_symlink_escaping_the_repository_is_refused(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(tmp_path / "secret.md", "SECRET")
    (root / "link.md").symlink_to(tmp_path / "secret.md")
    write(root / "AGENTS.md", "@link.md")
    ctx = load_project_context(root, user_dir=user_dir)
    assert "SECRET" not in ctx.text
    assert "outside" in ctx.warnings[0]


def test_import_cycle_is_cut_with_a_warning(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "main\n@a.md")
    write(root / "a.md", "A\n@b.md")
    write(root / "b.md", "B\n@a.md\n@b.md")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "main\nA\nB\n@a.md\n@b.md"
    assert len(ctx.warnings) == 2
    assert "import cycle (a.md -> b.md -> a.md)" in ctx.warnings[0]
    assert "import cycle (b.md -> b.md)" in ctx.warnings[1]
    assert all(w.startswith(str(root / "b.md")) for w in ctx.warnings)


def test_a_file_imported_twice_appears_once(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "common.md", "COMMON")
    write(root / "AGENTS.md", "@common.md")
    write(root / "CLAUDE.md", "claude\n@common.md")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text.count("COMMON") == 1
    assert ctx.warnings == ()


def test_missing_import_is_skipped_with_a_warning(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "rules\n@docs/missing.md")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text == "rules\n@docs/missing.md"
    assert ctx.warnings == (f"{root / 'AGENTS.md'}: @docs/missing.md: file not found; import skipped",)


def test_imports_nest_at_most_five_deep(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "@f1.md")
    for i in range(1, 8):
        write(root / f"f{i}.md", f"level {i}\n@f{i + 1}.md")
    ctx = load_project_context(root, user_dir=user_dir)
    assert "level 5" in ctx.text
    assert "level 6" not in ctx.text
    assert len(ctx.warnings) == 1
    assert ctx.warnings[0].startswith(str(root / "f5.md"))
    assert "nested more than 5 deep" in ctx.warnings[0]


def test_user_level_imports_are_confined_to_the_user_directory(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "project.md", "PROJECT FILE")
    write(user_dir / "mine.md", "MINE")
    write(user_dir / "AGENTS.md", f"@mine.md\n@{os.path.relpath(root / 'project.md', user_dir)}")
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.text.startswith("MINE\n")
    assert "PROJECT FILE" not in ctx.text
    assert "outside" in ctx.warnings[0]


# --- project context: cap ----------------------------------------------------------------------------------------


def test_context_over_64kb_is_cut_with_a_visible_note(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "x" * (CAP_BYTES + 1))
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.truncated
    assert ctx.text.endswith(TRUNCATION_NOTE)
    assert TRUNCATION_NOTE == "\n\n[project context truncated at 64KB]"
    assert len(ctx.text.encode()) <= CAP_BYTES
    assert len(ctx.text.encode()) > CAP_BYTES - 100
    assert any("64 KB" in w for w in ctx.warnings)


def test_cap_counts_all_files_together_and_never_splits_a_character(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "é" * 20_000)  # 40,000 bytes
    write(root / "CLAUDE.md", "ü" * 20_000)  # 40,000 more
    ctx = load_project_context(root, user_dir=user_dir)
    assert ctx.truncated
    assert len(ctx.text.encode()) <= CAP_BYTES
    body = ctx.text.removesuffix(TRUNCATION_NOTE)
    assert "\ufffd" not in body
    assert body.startswith("é" * 20_000 + SEPARATOR + "ü")


def test_context_at_exactly_the_cap_is_not_cut(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    write(root / "AGENTS.md", "y" * CAP_BYTES)
    ctx = load_project_context(root, user_dir=user_dir)
    assert not ctx.truncated
    assert ctx.text == "y" * CAP_BYTES


# --- skills: discovery and frontmatter ---------------------------------------------------------------------------


def skill_file(base: Path, skill_id: str, text: str) -> Path:
    return write(base / skill_id / "SKILL.md", text)


def test_discovers_agents_and_claude_skills_with_their_fields(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    review = skill_file(
        root / ".agents/skills", "review", "---\nname: review\ndescription: Review a change\n---\n# Review workflow\n"
    )
    skill_file(root / ".claude/skills", "teach", "Teach step by step.")
    skills, warnings = discover_skills(root, user_dir=user_dir)
    assert warnings == []
    assert skills == [
        Skill("review", "review", "Review a change", review, root / ".agents/skills/review", "project"),
        Skill("teach", "teach", "", root / ".claude/skills/teach/SKILL.md", root / ".claude/skills/teach", "project"),
    ]
    assert read_skill_body(skills[0]) == "# Review workflow"
    assert read_skill_body(skills[1]) == "Teach step by step."


def test_no_skill_directories_means_no_skills(tmp_path: Path, user_dir: Path) -> None:
    assert discover_skills(repo(tmp_path), user_dir=user_dir) == ([], [])


def test_only_subdirectories_with_a_skill_md_count(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    base = root / ".agents/skills"
    (base / "empty-dir").mkdir(parents=True)
    write(base / "README.md", "not a skill")
    skill_file(base, ".hidden", "hidden")
    skill_file(base, "real", "real one")
    skills, warnings = discover_skills(root, user_dir=user_dir)
    assert [s.id for s in skills] == ["real"]
    assert warnings == []


def test_discovery_order_and_nearest_skill_wins(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "sub"
    skill_file(cwd / ".claude/skills", "b-near-claude", "x")
    skill_file(cwd / ".agents/skills", "z-near-agents", "x")
    skill_file(cwd / ".agents/skills", "shared", "---\ndescription: near\n---\nnear body")
    skill_file(root / ".agents/skills", "shared", "---\ndescription: root\n---\nroot body")
    skill_file(root / ".agents/skills", "a-root", "x")
    skill_file(user_dir / "skills", "mine", "x")
    skill_file(user_dir / "skills", "a-root", "---\ndescription: user copy\n---\n")
    skills, warnings = discover_skills(cwd, user_dir=user_dir)
    assert warnings == []
    assert [s.id for s in skills] == ["shared", "z-near-agents", "b-near-claude", "a-root", "mine"]
    assert skills[0].description == "near"
    assert skills[3].scope == "project"
    assert skills[4].scope == "user"
    assert [s.id for s in discover_skills(root / "elsewhere", user_dir=user_dir)[0]] == ["a-root", "shared", "mine"]


def test_frontmatter_name_is_a_display_name_and_the_directory_is_the_id(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    skill_file(root / ".agents/skills", "review", "---\nname: Display Review\n---\nbody")
    [skill], _ = discover_skills(root, user_dir=user_dir)
    assert (skill.id, skill.name, skill.description) == ("review", "Display Review", "")


def test_frontmatter_is_real_yaml(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    text = (
        "---\n"
        'name: "Review: strict"  # a comment\n'
        "description: >\n"
        "  Reviews a change\n"
        "  line by line.\n"
        "allowed-tools: [Read, Grep]\n"
        "metadata:\n"
        "  version: 2\n"
        "---\n"
        "Body\n"
    )
    skill_file(root / ".agents/skills", "review", text)
    [skill], warnings = discover_skills(root, user_dir=user_dir)
    assert warnings == []
    assert skill.name == "Review: strict"
    assert skill.description == "Reviews a change line by line."
    assert read_skill_body(skill) == "Body"


def test_missing_name_falls_back_to_the_directory_name(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    skill_file(root / ".agents/skills", "deploy", "---\ndescription: 'Ship it'\n---\n")
    [skill], warnings = discover_skills(root, user_dir=user_dir)
    assert (skill.id, skill.name, skill.description) == ("deploy", "deploy", "Ship it")
    assert warnings == []


def test_empty_frontmatter_and_crlf_are_fine(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    skill_file(root / ".agents/skills", "empty", "---\n---\nbody")
    (root / ".agents/skills/crlf").mkdir()
    (root / ".agents/skills/crlf/SKILL.md").write_bytes(b"---\r\ndescription: windows\r\n---\r\nbody\r\n")
    skills, warnings = discover_skills(root, user_dir=user_dir)
    assert warnings == []
    assert [(s.id, s.description) for s in skills] == [("crlf", "windows"), ("empty", "")]
    assert read_skill_body(skills[0]) == "body"


def test_broken_yaml_warns_naming_the_file_and_the_skill_still_loads(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    path = skill_file(root / ".agents/skills", "broken", "---\nname: ok\ndescription: [unclosed\n---\nstill a body")
    skill_file(root / ".agents/skills", "fine", "---\ndescription: works\n---\n")
    skills, warnings = discover_skills(root, user_dir=user_dir)
    assert [(s.id, s.name, s.description) for s in skills] == [("broken", "broken", ""), ("fine", "fine", "works")]
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{path}: broken YAML frontmatter (line ")
    assert read_skill_body(skills[0]) == "still a body"


def test_unclosed_frontmatter_warns_and_keeps_the_whole_file_as_body(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    path = skill_file(root / ".agents/skills", "open", "---\ndescription: never closed\nbody")
    [skill], warnings = discover_skills(root, user_dir=user_dir)
    assert (skill.name, skill.description) == ("open", "")
    assert warnings == [f"{path}: frontmatter has no closing `---` line; loaded without name or description"]
    assert read_skill_body(skill) == "---\ndescription: never closed\nbody"


def test_frontmatter_that_is_not_a_mapping_warns(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    path = skill_file(root / ".agents/skills", "listy", "---\n- a\n- b\n---\nbody")
    [skill], warnings = discover_skills(root, user_dir=user_dir)
    assert skill.name == "listy"
    assert len(warnings) == 1
    assert warnings[0].startswith(f"{path}: frontmatter is a YAML list")


def test_odd_field_types(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    path = skill_file(root / ".agents/skills", "odd", "---\nname: 2024\ndescription: [a, b]\n---\n")
    [skill], warnings = discover_skills(root, user_dir=user_dir)
    assert (skill.name, skill.description) == ("2024", "")
    assert warnings == [f"{path}: frontmatter `description` should be text, not a YAML list; ignored"]


def test_unreadable_skill_md_is_skipped_with_a_warning(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    (root / ".agents/skills/weird/SKILL.md").mkdir(parents=True)
    skill_file(root / ".agents/skills", "ok", "fine")
    skills, warnings = discover_skills(root, user_dir=user_dir)
    assert [s.id for s in skills] == ["ok"]
    assert len(warnings) == 1
    assert str(root / ".agents/skills/weird/SKILL.md") in warnings[0]


def test_skill_body_over_32kb_is_cut_with_a_note(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    skill_file(root / ".agents/skills", "big", "---\ndescription: big\n---\n" + "é" * BODY_CAP_BYTES)
    [skill], _ = discover_skills(root, user_dir=user_dir)
    body = read_skill_body(skill)
    assert body.endswith(BODY_TRUNCATION_NOTE)
    assert BODY_TRUNCATION_NOTE == "\n\n[skill truncated at 32KB]"
    assert len(body.encode()) <= BODY_CAP_BYTES
    assert "\ufffd" not in body


def test_yaml_is_imported_only_for_frontmatter(tmp_path: Path) -> None:
    root = repo(tmp_path)
    skill_file(root / ".agents/skills", "plain", "no frontmatter")
    script = (
        "import sys, pathlib\n"
        "from react_agent_mini.context.skills import discover_skills\n"
        "from react_agent_mini.context.system_prompt import build_system_prompt\n"
        "from react_agent_mini.tools.builtin.skill import SkillTool\n"
        f"skills, _ = discover_skills(pathlib.Path({str(root)!r}), user_dir=pathlib.Path({str(tmp_path)!r}))\n"
        "assert [s.id for s in skills] == ['plain']\n"
        "print('yaml' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    skill_file(root / ".agents/skills", "fancy", "---\ndescription: d\n---\n")
    out = subprocess.run(
        [sys.executable, "-c", script.replace("['plain']", "['fancy', 'plain']")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "True"


# --- skills: catalogue -------------------------------------------------------------------------------------------


def make_skill(tmp_path: Path, skill_id: str, description: str = "", name: str = "") -> Skill:
    return Skill(skill_id, name or skill_id, description, tmp_path / skill_id / "SKILL.md", tmp_path / skill_id)


def test_catalogue_lists_id_name_and_description(tmp_path: Path) -> None:
    skills = [
        make_skill(tmp_path, "review", "Review a change"),
        make_skill(tmp_path, "teach"),
        make_skill(tmp_path, "ship", "Release it", name="Ship It"),
    ]
    text = skills_catalogue(skills, budget_chars=10_000)
    assert text == CATALOGUE_HEADER + "- review: Review a change\n- teach\n- ship (Ship It): Release it\n"
    assert "Skill tool" in text


def test_catalogue_is_empty_without_skills() -> None:
    assert skills_catalogue([], budget_chars=10_000) == ""


def test_catalogue_keeps_within_budget_and_counts_what_it_left_out(tmp_path: Path) -> None:
    skills = [make_skill(tmp_path, f"skill-{i:02}", "does a thing " * 5) for i in range(40)]
    budget = len(CATALOGUE_HEADER) + 1000
    text = skills_catalogue(skills, budget_chars=budget)
    assert len(text) <= budget
    listed = [line for line in text.splitlines() if line.startswith("- skill-")]
    assert 5 < len(listed) < 40
    assert listed[0].startswith("- skill-00:")  # earlier skills (nearer, project) have priority
    assert f"({40 - len(listed)} more skills not listed here" in text
    # one more line would not have fitted together with the note
    full = skills_catalogue(skills, budget_chars=100_000)
    assert "more skill" not in full
    assert full.startswith(text[: text.index("(")])


def test_catalogue_note_for_one_left_out_is_singular(tmp_path: Path) -> None:
    skills = [make_skill(tmp_path, "a", "x" * 50), make_skill(tmp_path, "b", "y" * 200)]
    budget = len(CATALOGUE_HEADER) + len("- a: " + "x" * 50 + "\n") + 150
    text = skills_catalogue(skills, budget_chars=budget)
    assert len(text) <= budget
    assert "- a: " in text
    assert "- b: " not in text
    assert "(1 more skill not listed here" in text


def test_catalogue_with_a_tiny_budget_still_says_how_many_exist(tmp_path: Path) -> None:
    text = skills_catalogue([make_skill(tmp_path, "a"), make_skill(tmp_path, "b")], budget_chars=10)
    assert "- a" not in text
    assert "(2 more skills not listed here" in text


def test_catalogue_cuts_very_long_descriptions(tmp_path: Path) -> None:
    text = skills_catalogue([make_skill(tmp_path, "long", "word " * 200)], budget_chars=100_000)
    line = text.splitlines()[-1]
    assert line.endswith("…")
    assert len(line) < 320


# --- memory ------------------------------------------------------------------------------------------------------


def test_memory_missing_file_is_empty_and_creating_it_is_a_change(tmp_path: Path) -> None:
    memory = Memory(tmp_path / MEMORY_FILE)
    assert memory.changed()  # never read
    assert memory.text() == ""
    assert not memory.changed()
    write(memory.path, "- tests: `make test`\n")
    assert memory.changed()
    assert memory.text() == "- tests: `make test`"
    assert not memory.changed()


def test_memory_change_is_seen_by_mtime(tmp_path: Path) -> None:
    path = write(tmp_path / MEMORY_FILE, "one")
    memory = Memory(path)
    assert memory.text() == "one"
    assert not memory.changed()
    path.write_text("two")  # same size: only the mtime tells
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))
    assert memory.changed()
    assert memory.changed()  # asking does not reset it; reading does
    assert memory.text() == "two"
    assert not memory.changed()
    path.unlink()
    assert memory.changed()
    assert memory.text() == ""
    assert not memory.changed()


def test_memory_is_capped_at_32kb(tmp_path: Path) -> None:
    path = write(tmp_path / MEMORY_FILE, "m" * (MEMORY_CAP * 2))
    memory = Memory(path)
    text = memory.text()
    assert text.endswith("\n\n[memory truncated at 32KB]")
    assert len(text.encode()) <= MEMORY_CAP
    assert memory.truncated


def test_unreadable_memory_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / MEMORY_FILE
    path.mkdir(parents=True)
    memory = Memory(path)
    assert memory.text() == ""
    assert memory.warning.startswith(str(path))


def test_memory_file_is_the_nearest_existing_one_else_the_working_directorys(tmp_path: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "pkg" / "src"
    cwd.mkdir(parents=True)
    assert find_memory_file(cwd) == cwd / MEMORY_FILE
    write(root / MEMORY_FILE, "root memory")
    assert find_memory_file(cwd) == root / MEMORY_FILE
    write(root / "pkg" / MEMORY_FILE, "pkg memory")
    assert find_memory_file(cwd) == root / "pkg" / MEMORY_FILE
    write(tmp_path / MEMORY_FILE, "above the repository")
    assert find_memory_file(root / "other") == root / MEMORY_FILE


# --- system prompt -----------------------------------------------------------------------------------------------


def test_system_prompt_sections_in_order(tmp_path: Path, user_dir: Path) -> None:
    root = repo(tmp_path)
    cwd = root / "sub"
    write(root / "AGENTS.md", "ROOT RULES")
    write(cwd / "CLAUDE.md", "SUB RULES")
    write(root / MEMORY_FILE, "REMEMBERED FACT")
    skill_file(root / ".agents/skills", "review", "---\ndescription: Review a change\n---\nbody")
    skill_file(root / ".claude/skills", "teach", "body")
    project = load_project_context(cwd, user_dir=user_dir)
    skills, _ = discover_skills(cwd, user_dir=user_dir)
    prompt = build_system_prompt(
        cwd=cwd,
        project=project,
        memory=Memory(find_memory_file(cwd)),
        catalogue=skills_catalogue(skills, budget_chars=10_000),
        now=datetime(2026, 3, 4, 12, 0),
        platform="Linux",
    )
    assert prompt.startswith(BASE_PROMPT)
    markers = [
        "# Using the tools",
        "# Environment",
        "# Project instructions",
        "ROOT RULES",
        "SUB RULES",
        "# Memory",
        "REMEMBERED FACT",
        "# Skills",
        "- review: Review a change",
        "- teach",
    ]
    positions = [prompt.index(m) for m in markers]
    assert positions == sorted(positions)
    assert f"- Working directory: {cwd}\n" in prompt
    assert f"- Git repository: yes, rooted at {root}\n" in prompt
    assert "- Platform: Linux\n" in prompt
    assert "- Today's date: 2026-03-04" in prompt
    assert f"From {root / 'AGENTS.md'}, {cwd / 'CLAUDE.md'}, outermost first" in prompt
    assert f"`{root / MEMORY_FILE}`" in prompt


def test_system_prompt_leaves_out_empty_sections(tmp_path: Path) -> None:
    prompt = build_system_prompt(cwd=tmp_path, project=ProjectContext(), memory=None, catalogue="", platform="X")
    assert prompt.startswith(BASE_PROMPT)
    for absent in ("# Project instructions", "# Memory", "# Skills"):
        assert absent not in prompt
    assert prompt.endswith(f"- Today's date: {datetime.now().date().isoformat()}")
    assert "- Git repository: no\n" in prompt


def test_memory_section_guides_remembering_and_forgetting(tmp_path: Path) -> None:
    root = repo(tmp_path)
    memory = Memory(root / MEMORY_FILE)
    prompt = build_system_prompt(cwd=root, project=ProjectContext(), memory=memory, catalogue="")
    section = prompt[prompt.index("# Memory") :]
    assert "`.agents/memory/MEMORY.md`" in section
    assert "Remember:" in section and "Forget:" in section
    assert "Edit" in section and "Write" in section
    assert section.endswith("(Nothing remembered yet: the file does not exist. Write creates it and its directory.)")
    assert "- Git repository: yes (the working directory is its root)\n" in prompt
    write(memory.path, "")
    assert memory.changed()
    prompt = build_system_prompt(cwd=root, project=ProjectContext(), memory=memory, catalogue="")
    assert prompt.endswith("(MEMORY.md is empty.)")
    assert not memory.changed()
