"""How the REPL shows the model's task list (TodoWrite) and what a subagent does, under the turn's tool lines.

    ● TodoWrite 1/3 done                    ● Agent find the parser (Explore)
      ⎿ ☒ Read the code                       ⎿ Read src/parse.py
        ◼ Fixing the bug                        Grep "def parse" in src
        ☐ Run the tests                       ⎿ done · 2 tool calls

The item in progress shows its `activeForm`, bold; completed items are dimmed and struck through.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..terminal_text import visible
from ..tools.builtin.todo import Todo

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

MARKS = {"completed": "☒", "in_progress": "◼", "pending": "☐"}
STYLES = {"completed": "dim strike", "in_progress": "bold", "pending": ""}


def checklist(todos: Sequence[Todo]) -> RenderableType:
    """The list, one row per item, indented under its tool line."""
    from rich.console import Group
    from rich.text import Text

    if not todos:
        return Text("  ⎿ (the list is empty)", style="dim")
    rows = []
    for number, todo in enumerate(todos):
        text = todo.active_form if todo.status == "in_progress" and todo.active_form else todo.content
        row = Text("  ⎿ " if number == 0 else "    ")
        row.append(f"{MARKS[todo.status]} {visible(text)}", style=STYLES[todo.status])
        row.no_wrap, row.overflow = True, "ellipsis"
        rows.append(row)
    return Group(*rows)


def inner_line(label: str, first: bool) -> Text:
    """One tool call a subagent made, under its Agent line (`label`: `Read src/app.py`)."""
    from rich.text import Text

    line = Text(("  ⎿ " if first else "    ") + visible(label), style="dim")
    line.no_wrap, line.overflow = True, "ellipsis"
    return line


def inner_error(label: str, error: str, first: bool) -> Text:
    from rich.text import Text

    line = Text(("  ⎿ " if first else "    ") + visible(label), style="dim")
    line.append(f" — {visible(error)}", style="red")
    line.no_wrap, line.overflow = True, "ellipsis"
    return line


def agent_done(calls: int, error: str | None) -> Text:
    """The line closing an Agent call: how many tool calls it made, or why it failed."""
    from rich.text import Text

    counted = f"{calls} tool call{'s' if calls != 1 else ''}"
    if error is not None:
        return Text(f"  ⎿ failed after {counted}: {visible(error)}", style="red")
    return Text(f"  ⎿ done · {counted}", style="dim")
