"""The tools ram comes with (the framework they are built on, `base`, `runner` and `declared`, is `tools/`).

`family_named` tells what a built-in tool is for a history that only names its calls (a transcript compacted,
shown or resumed), as the tool class declares it (`declared.py`): no other package keeps a table of tool names.
"""

from __future__ import annotations

from functools import cache

from ..declared import Family, family_of


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
    """Every built-in tool class (imported at the first question, not on the start-up path)."""
    from .bash import BashTool
    from .bash_output import BashOutputTool
    from .echo import EchoTool
    from .edit import EditTool
    from .glob import GlobTool
    from .grep import GrepTool
    from .kill_shell import KillShellTool
    from .read import ReadTool
    from .skill import SkillTool
    from .todo import TodoWriteTool
    from .web_fetch import WebFetchTool
    from .web_search import WebSearchTool
    from .write import WriteTool

    return (ReadTool, WriteTool, EditTool, GlobTool, GrepTool, BashTool, BashOutputTool, KillShellTool,
            WebFetchTool, WebSearchTool, TodoWriteTool, SkillTool, EchoTool)  # fmt: skip
