"""TodoWrite: the model's task list for the session, with Claude Code's fields (`todos`: `content`, `status`,
`activeForm`).

Each call replaces the whole list. The tool keeps the latest list so that it can be shown (the REPL prints a
checklist, ACP sends a `plan`, stream-json carries the call itself) and put back after a summary rewrote the
history (`reminder`, re-injected with the loaded skills). A resumed session takes its list from the last TodoWrite
call in its history (`restore`). It changes no file, so it needs no permission.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

import msgspec

from ...messages import Message, user_text
from ..base import ModelTool, ToolContext, ToolOutput

Status = Literal["pending", "in_progress", "completed"]


class Todo(msgspec.Struct, frozen=True):
    content: Annotated[str, msgspec.Meta(min_length=1, description="Imperative: 'Run the tests'.")]
    status: Annotated[Status, msgspec.Meta(description="One item in_progress at a time.")]
    active_form: Annotated[str, msgspec.Meta(description="Present continuous: 'Running the tests'.")] = msgspec.field(
        default="", name="activeForm"
    )
    id: str | None = None
    """Accepted from older models (Claude Code's first TodoWrite had ids and priorities); not needed."""
    priority: Literal["high", "medium", "low"] | None = None


class TodoWriteArgs(msgspec.Struct):
    todos: Annotated[list[Todo], msgspec.Meta(description="The whole list, not only changes.")]


DESCRIPTION = """\
Keep a task list for this session, shown to the user: for work of three or more steps or given as a list. Mark \
an item in_progress before you start it and completed as soon as it is fully done (not when tests fail or it is \
partial: add an item for the blocker); drop items that no longer matter."""

RESULT = (
    "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. "
    "Please proceed with the current tasks if applicable"
)
MARKS: dict[Status, str] = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


class TodoWriteTool(ModelTool[TodoWriteArgs]):
    name = "TodoWrite"
    description = DESCRIPTION
    args_model = TodoWriteArgs
    read_only = True  # it only keeps a list: nothing on disk, nothing to ask about
    concurrency_safe = False  # two lists in one message: the later one wins, in order

    def __init__(self) -> None:
        self.todos: tuple[Todo, ...] = ()
        """The latest list."""

    def input_schema(self) -> Mapping[str, Any]:
        schema = dict(super().input_schema())
        item = dict(schema.pop("$defs", {}).get("Todo", {}))
        item["required"] = ["content", "status", "activeForm"]  # what the model should send (we accept less)
        item["properties"] = {
            k: v for k, v in item.get("properties", {}).items() if k in ("content", "status", "activeForm")
        }
        todos = {**schema["properties"]["todos"], "items": item}
        return {**schema, "properties": {"todos": todos}}

    def describe_call(self, raw: Mapping[str, Any]) -> str:
        todos = raw.get("todos")
        if not isinstance(todos, list):
            return ""
        done = sum(1 for t in todos if isinstance(t, dict) and t.get("status") == "completed")
        return f"{done}/{len(todos)} done"

    async def call(self, args: TodoWriteArgs, ctx: ToolContext) -> ToolOutput:
        self.todos = tuple(args.todos)
        return ToolOutput(RESULT)

    def reminder(self) -> list[Message]:
        """The list as a message for the model (after a summary), or nothing when the list is empty or all done."""
        if not self.todos or all(todo.status == "completed" for todo in self.todos):
            return []
        lines = [f"{MARKS[todo.status]} {todo.content}" for todo in self.todos]
        text = (
            "Your todo list (TodoWrite) as it stood before the conversation was summarised; keep it up to date:\n"
            + "\n".join(lines)
        )
        return [user_text(text, meta=True)]

    def restore(self, history: Sequence[Message]) -> None:
        """Take the list from the last TodoWrite call of `history` that succeeded (a resumed session)."""
        failed = {r.tool_use_id for m in history for r in m.tool_results if r.is_error}
        for message in reversed(history):
            for use in reversed(message.tool_uses):
                if use.name == self.name and use.id not in failed:
                    try:
                        self.todos = tuple(self.validate(use.input).todos)
                    except Exception:  # a call the tool refused then: look further back
                        continue
                    return

    def reset(self) -> None:
        """Forget the list (`/clear`)."""
        self.todos = ()


def parse_todos(raw: object) -> tuple[Todo, ...] | None:
    """The todos of a TodoWrite input, or None when it does not hold a valid list (for displays)."""
    try:
        return tuple(TodoWriteTool().validate(raw).todos) if isinstance(raw, Mapping) else None
    except Exception:
        return None
