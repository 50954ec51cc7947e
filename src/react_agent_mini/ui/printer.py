"""What the REPL prints itself, outside a turn's display (`render.TurnView`): one-line messages for the user, a
Markdown document, the status line after a turn, and the recap of a resumed conversation.

rich is loaded when the first thing is printed (the session build makes the console in the background, while the
prompt waits), never on the way to the first prompt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ..host import SessionHost


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line, at most `limit` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def setup_style(line: str) -> str:
    """How a line about the session (a setup warning, a hook's remark) is shown: errors red, warnings yellow, the
    rest dim."""
    if line.startswith("error:"):
        return "bold red"
    return "yellow" if line.startswith("warning:") else "dim"


def recap_text(host: SessionHost | None, title: str) -> str:
    """`title · N messages` and the last exchange, for a resumed session (`title` alone before it is built)."""
    if host is None:
        return title
    messages = host.session.messages
    lines = [f"{title} · {len(messages)} messages"]
    asked = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].is_user_text and not messages[i].meta), -1)
    if asked >= 0:  # the last exchange: what the user said, and what came after it (if anything did)
        lines.append(f"  you: {one_line(messages[asked].text, 200)}")
        answer = next((m.text for m in reversed(messages[asked:]) if m.role == "assistant" and m.text.strip()), "")
        lines.append(f"  agent: {one_line(answer, 300)}" if answer else "  agent: (no answer: the turn did not finish)")
    return "\n".join(lines)


class Printer:
    """The REPL's console, made on first use."""

    def __init__(self) -> None:
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        if self._console is None:
            from .render import make_console

            self._console = make_console()
        return self._console

    def say(self, text: str, style: str = "") -> None:
        """Print one message for the user (not model output)."""
        from rich.text import Text

        self.console.print(Text(text, style=style))

    def markdown(self, text: str) -> None:
        from .render import markdown

        self.console.print(markdown(text))

    def status(self, host: SessionHost) -> None:
        """The line after a turn: context use, tokens and cost so far, with a blank line either side."""
        from ..pricing import cost_usd, format_cost
        from .render import status_line

        session = host.session
        usage = session.totals.usage
        cost = cost_usd(host.model, usage)
        line = status_line(
            session.context_reading().percent,
            usage.total_input_tokens,
            usage.output_tokens,
            format_cost(cost) if cost is not None else "",
        )
        self.console.print()
        self.console.print(line)
        self.console.print()
