"""Every tool ram comes with, known by name: the tool kit's own (`tools/builtin/`) and the web's WebFetch and
WebSearch (`web/fetch_tool.py`, `web/search_tool.py`), which are built on the tool kit and on parts above it (the
web package asks a model, and reads the settings files), so they live with the web rather than in `tools/`.

`family_named` tells what a built-in tool is for a history that only names its calls (a transcript compacted,
shown or resumed), as the tool class declares it (`tools.declared`): no other package keeps a table of tool names.
The classes are imported at the first question, not on the start-up path.
"""

from __future__ import annotations

from functools import cache

from .tools.declared import Family, family_of


def family_named(name: str) -> Family | None:
    """The family of the built-in tool called `name`; None when ram has no built-in tool of that name."""
    return _built_in_families().get(name)


def built_in_names() -> tuple[str, ...]:
    """The names of every built-in tool."""
    return tuple(_built_in_families())


@cache
def _built_in_families() -> dict[str, Family]:
    return {str(getattr(tool, "name", "")): family_of(tool) for tool in built_in_classes()}


def built_in_classes() -> tuple[type, ...]:
    """Every built-in tool class."""
    from .tools.builtin.bash import BashTool
    from .tools.builtin.bash_output import BashOutputTool
    from .tools.builtin.echo import EchoTool
    from .tools.builtin.edit import EditTool
    from .tools.builtin.glob import GlobTool
    from .tools.builtin.grep import GrepTool
    from .tools.builtin.kill_shell import KillShellTool
    from .tools.builtin.read import ReadTool
    from .tools.builtin.skill import SkillTool
    from .tools.builtin.todo import TodoWriteTool
    from .tools.builtin.write import WriteTool
    from .web.fetch_tool import WebFetchTool
    from .web.search_tool import WebSearchTool

    return (ReadTool, WriteTool, EditTool, GlobTool, GrepTool, BashTool, BashOutputTool, KillShellTool,
            WebFetchTool, WebSearchTool, TodoWriteTool, SkillTool, EchoTool)  # fmt: skip
