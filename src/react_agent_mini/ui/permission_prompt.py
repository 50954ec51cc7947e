"""The permission prompt: show exactly what will happen, then take `[y/a/N]`.

What is shown: for an Edit, the diff it will make to the file as it is now; for a Write, the path, the size and
the diff (or the content of a new file); for Bash, the full command, every line; for anything else, the
arguments. Then why it needs asking, and what `a` would allow for the rest of the session. One key answers, no
Enter (as in Claude Code and Codex): `y` allows this call once, `a` records the narrow rule the policy offers (or
means `y` when there is none), `n` — and Enter or Esc, the default — declines, which ends the turn; other keys do
nothing. Keys typed before the prompt appeared never answer it (they are dropped first). Ctrl+C at the prompt
interrupts the whole turn. Without a terminal (plain-line input), a line answers: `y`/`yes`, `a`/`always`, else no.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from ..abort import Aborted
from ..permissions.policy import Answer, PermissionRequest
from ..terminal_text import visible
from .diff import preview_for
from .prompt_base import PromptInterrupted

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

QUESTION = "Allow? [y/a/N] "
KEYS = "yan"
"""The keys that answer it (Enter and Esc: the default, N)."""
ARGS_LINES = 30
"""Lines of pretty-printed arguments shown for tools without a dedicated view."""
PROMPT_DIFF_LINES = 200
"""Diff lines a prompt shows before it says how many more there are: everything for any usual edit (scroll back
to read a long one); long lines wrap, never cut."""


def parse_answer(line: str, always_offered: bool) -> Answer:
    """`y`/`yes` → yes; `a`/`always` → always (yes when no rule can be offered); anything else → no."""
    answer = line.strip().lower()
    if answer in ("y", "yes"):
        return "yes"
    if answer in ("a", "always"):
        return "always" if always_offered else "yes"
    return "no"


def describe_request(request: PermissionRequest, root: Path, max_diff_lines: int) -> list[RenderableType]:
    """The lines shown above the question."""
    from rich.text import Text

    from .render import render_preview

    out: list[RenderableType] = []
    head = Text()
    if request.outside_workspace:
        head.append("! outside the workspace: ", style="bold red")
    head.append(visible(request.summary), style="bold yellow")
    out.append(head)
    out.append(Text(f"  needs permission: {request.reason}", style="dim"))
    preview = preview_for(request.tool, root, request.args)
    if preview is not None:
        if preview.note:
            out.append(Text(f"  {preview.note}", style="red" if preview.fails else "dim"))
        if preview.lines:
            out.append(render_preview(preview, max_diff_lines, wrap=True))
    elif request.tool == "Bash" and isinstance(request.args.get("command"), str):
        lines = request.args["command"].strip("\n").split("\n")  # only LF: a CR is shown (^M), never obeyed
        for number, line in enumerate(lines):
            out.append(Text(("  $ " if number == 0 else "    ") + visible(line), style="bold"))
        description = request.args.get("description")
        if isinstance(description, str) and description.strip():
            out.append(Text(f"  ({visible(description.strip())})", style="dim"))
    elif request.args:
        shown = json.dumps(dict(request.args), indent=2, ensure_ascii=False, default=str).splitlines()
        for line in shown[:ARGS_LINES]:
            out.append(Text("  " + line))
        if len(shown) > ARGS_LINES:
            out.append(Text(f"  … {len(shown) - ARGS_LINES} more lines", style="dim"))
    always = (
        f"a = always allow {request.always_rule} for this session"
        if request.always_rules
        else "a = yes (no narrower rule can be recorded for this call)"
    )
    out.append(Text(f"  y = yes, once · {always} · n (or Enter) = no, stop the turn", style="dim"))
    return out


class PermissionPrompt:
    """The session's asker: pauses the turn's display, shows the request, reads the answer."""

    def __init__(
        self,
        console: Console,
        root: Path,
        read_answer: Callable[[str, str], Awaitable[str]],
        pause: Callable[[], AbstractContextManager[None]],
        on_shown: Callable[[PermissionRequest], None],
        on_interrupt: Callable[[], None],
    ) -> None:
        self.console = console
        self.root = root
        self.read_answer = read_answer
        """Reads the answer to the question, one of the keys given (`Input.ask_key`: a line without a terminal;
        raises PromptInterrupted on Ctrl+C, EOFError on Ctrl+D)."""
        self.pause = pause
        """Takes the turn's live display down while the prompt is up (and drops keys typed ahead)."""
        self.on_shown = on_shown
        """Told what was shown (the turn view then does not repeat the diff)."""
        self.on_interrupt = on_interrupt
        """Ctrl+C at the prompt: abort the turn."""

    async def __call__(self, request: PermissionRequest) -> Answer:
        from rich.text import Text

        with self.pause():
            self.console.print()
            for renderable in describe_request(request, self.root, PROMPT_DIFF_LINES):
                self.console.print(renderable)
            self.on_shown(request)
            try:
                line = await self.read_answer(QUESTION, KEYS)
            except PromptInterrupted:
                self.on_interrupt()
                raise Aborted("interrupted") from None
            except EOFError:
                line = ""
            answer = parse_answer(line, bool(request.always_rules))
            if answer == "always":
                self.console.print(Text(f"  allowed for this session: {request.always_rule}", style="dim"))
            elif answer == "no":
                self.console.print(Text("  declined", style="dim"))
            return answer
