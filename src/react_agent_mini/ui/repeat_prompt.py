"""The REPL's question when the model makes the same call again and again (`model_faults/doom_loop.py`):

    The model has made the same call 3 times: Bash `ls`.
    Let it go on? [y/N]

One key answers, as the permission prompts do: `y` lets the calls run (the question comes again after three more),
`n`, Enter or Esc stops the turn. Keys typed before the question appeared never answer it; Ctrl+C interrupts the
turn. Without a terminal (plain-line input), a line answers: `y`/`yes`, else no.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ..abort import Aborted
from ..terminal_text import visible
from .prompt_base import PromptInterrupted

if TYPE_CHECKING:
    from rich.console import Console

    from ..model_faults.doom_loop import RepeatedCall

QUESTION = "Let it go on? [y/N] "
KEYS = "yn"


async def ask_repeat(
    repeated: RepeatedCall,
    console: Console,
    read_answer: Callable[[str, str], Awaitable[str]],
    pause: Callable[[], AbstractContextManager[None]],
    on_interrupt: Callable[[], None],
) -> bool:
    """Show the repeated call and read the answer; True: let the model go on. `read_answer`, `pause` and
    `on_interrupt` are the permission prompt's (`permission_prompt.PermissionPrompt`)."""
    from rich.text import Text

    with pause():
        console.print()
        head = Text("The model has made the same call ", style="bold yellow")
        head.append(f"{repeated.times} times: ", style="bold yellow")
        head.append(visible(_quoted(repeated.label)), style="bold")
        head.append(".", style="bold yellow")
        console.print(head)
        console.print(Text("  y = yes, let it go on · n (or Enter) = no, stop the turn", style="dim"))
        try:
            line = await read_answer(QUESTION, KEYS)
        except PromptInterrupted:
            on_interrupt()
            raise Aborted("interrupted") from None
        except EOFError:
            line = ""
        go_on = line.strip().lower() in ("y", "yes")
        console.print(Text("  going on" if go_on else "  stopped the turn", style="dim"))
        return go_on


def _quoted(label: str) -> str:
    """`Bash ls` shown as Bash `ls`: the tool, then what it was called with."""
    name, _, said = label.partition(" ")
    return f"{name} `{said}`" if said else name
