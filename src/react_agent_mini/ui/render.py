"""REPL output with rich: the answer rendered as Markdown while it streams, a spinner with elapsed time, one line per
tool call, coloured diffs for Edit and Write, the last lines a Bash command printed (dimmed), and one-line errors.

Streaming: finished Markdown blocks are printed once, for good; the block still growing is shown in a small live
area under them together with the spinner, re-rendered a few times a second and cut to the screen's height (so a
long code block never scrolls the live area off screen). On a terminal that is not interactive (output to a file),
there is no live area: blocks are printed as they finish. rich is imported here only, and this module only once
a turn is about to be shown (the REPL preloads it in the background while the prompt waits).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..builtin_tools import family_named
from ..events import (
    AssistantTurn,
    Compacted,
    Notice,
    QueryEvent,
    StreamRetry,
    Terminal,
    TextDelta,
    ThinkingDelta,
    ToolFinished,
    ToolProgress,
    ToolResults,
    ToolStarted,
)
from ..messages import ToolResultBlock, ToolUseBlock
from ..output import WAITING_AFTER, short
from ..shell_result import NO_OUTPUT, ShellResult
from ..terminal_text import visible
from .diff import Preview, preview_for
from .markdown_stream import MarkdownStream

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
    from rich.text import Text

DIFF_LINES_AFTER = 40
"""Diff lines shown after an Edit or Write ran (the permission prompt shows more)."""
OUTPUT_TAIL_LINES = 5
"""Lines of a Bash command's output shown under its tool line (`/output` shows them all)."""
LIVE_REFRESH_PER_SECOND = 12
AGENT_TOOLS = frozenset({"Agent", "Task"})
DECLINED_PREFIX = "The user doesn't want to proceed"
SKIPPED_PREFIX = "Skipped because"
INTERRUPTED_PREFIX = "Interrupted by the user"


def make_console() -> Console:
    """The REPL's console: no markup or emoji parsing in what it prints (model text is never markup), and no
    control character from the text it prints reaches the terminal (see `terminal_text`)."""
    from rich.console import Console

    class SafeConsole(Console):
        def print(self, *objects: Any, **kwargs: Any) -> None:
            super().print(*(Sanitized(o) for o in objects), **kwargs)

    return SafeConsole(highlight=False, markup=False, emoji=False)


class Sanitized:
    """A renderable whose text segments have their control characters made visible (rich's own control
    segments — cursor moves, styles — pass untouched)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        inner = self.inner
        if isinstance(inner, str):
            inner = console.render_str(visible(inner))
        for segment in console.render(inner, options):
            if segment.control or segment.text == "\n":
                yield segment
            else:
                yield Segment(visible(segment.text), segment.style)


def preload() -> None:
    """Import what rendering a turn needs (run in the background while the prompt waits for the first line)."""
    import rich.live
    import rich.markdown
    import rich.spinner
    import rich.syntax  # noqa: F401

    _markdown_class()
    MarkdownStream().feed("warm\n\nup\n")


_MARKDOWN: Any = None


def _markdown_class() -> Any:
    """rich's Markdown with headings left-aligned (a centred `# Title` reads oddly in a terminal)."""
    global _MARKDOWN
    if _MARKDOWN is None:
        from rich.markdown import Heading, Markdown

        class LeftHeading(Heading):
            LEVEL_ALIGN = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")

        class TerminalMarkdown(Markdown):
            elements: ClassVar[dict[str, Any]] = {**Markdown.elements, "heading_open": LeftHeading}

        _MARKDOWN = TerminalMarkdown
    return _MARKDOWN


def markdown(text: str) -> RenderableType:
    """`text` rendered as Markdown, without the blank lines rich puts around some blocks (the caller spaces them)."""
    return _Trimmed(_markdown_class()(text, code_theme="ansi_dark", hyperlinks=False))


class _Trimmed:
    """A renderable without its leading and trailing blank lines."""

    def __init__(self, inner: RenderableType) -> None:
        self.inner = inner

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment

        lines = console.render_lines(self.inner, options, pad=False)
        blank = [not "".join(segment.text for segment in line).strip() for line in lines]
        start = blank.index(False) if False in blank else len(lines)
        end = len(lines) - blank[::-1].index(False) if False in blank else start
        for line in lines[start:end]:
            for segment in line:
                yield segment if segment.control else Segment(visible(segment.text), segment.style)
            yield Segment.line()


def elapsed(seconds: float) -> str:
    """`4s`, `1m 05s`."""
    whole = int(seconds)
    return f"{whole}s" if whole < 60 else f"{whole // 60}m {whole % 60:02d}s"


def one_line(text: str, limit: int = 160) -> str:
    return short(text, limit)


def error_text(content: str) -> str:
    """A tool error as one short phrase (`declined`, `skipped`, or its first line)."""
    content = content.removeprefix("Error: ").strip()
    if content.startswith(DECLINED_PREFIX):
        return "declined"
    if content.startswith(SKIPPED_PREFIX):
        return "skipped"
    if content.startswith(INTERRUPTED_PREFIX):
        return "interrupted"
    return one_line(content.splitlines()[0] if content else "failed")


def tool_line(use: ToolUseBlock, label: str, error: str | None = None) -> Text:
    """`● Read src/app.py`, or `✗ Bash rm x — declined` in red (`error` empty: the red mark alone)."""
    from rich.text import Text

    label = visible(one_line(label, 200))
    if error is None:
        return Text.assemble(("● ", "green"), (use.name, "bold"), (" " + label) if label else "")
    reason = (" — " + error, "red") if error else ""
    return Text.assemble(("✗ ", "bold red"), (use.name, "bold"), (" " + label) if label else "", reason)


def render_preview(preview: Preview, max_lines: int, indent: str = "  ", *, wrap: bool = False) -> RenderableType:
    """The diff, coloured: removed lines red, added green, context dim, with line numbers; capped at `max_lines`.
    `wrap`: long lines wrap instead of ending in `…` (a permission prompt hides nothing of what it asks about)."""
    from rich.console import Group
    from rich.text import Text

    numbers = [max(line.old_number, line.new_number) for line in preview.lines]
    width = len(str(max(numbers, default=0)))
    rows: list[RenderableType] = []
    for line in preview.lines[:max_lines]:
        if line.kind == "gap":
            rows.append(Text(f"{indent}{'⋮':>{width}}", style="dim"))
            continue
        number = line.old_number if line.kind == "removed" else line.new_number
        shown = f"{number:>{width}}" if number else " " * width
        sign, style = {"removed": ("-", "red"), "added": ("+", "green"), "context": (" ", "dim")}[line.kind]
        row = Text(f"{indent}{shown} {sign} {visible(line.text.expandtabs(4))}", style=style)
        row.no_wrap = not wrap
        row.overflow = "fold" if wrap else "ellipsis"
        rows.append(row)
    hidden = len(preview.lines) - max_lines
    if hidden > 0:
        rows.append(Text(f"{indent}… {hidden} more lines (+{preview.added} -{preview.removed} in all)", style="dim"))
    return Group(*rows)


def bash_outcome(result: ToolResultBlock) -> tuple[str, str] | None:
    """A command's result as (what it printed, its status lines: `Exit code 1`, a timeout...), read from the result's
    data (`shell_result`); None when the command did not run (declined, skipped, interrupted, invalid): then there
    is no output. A result without data that is no error (a command started in the background) is all output."""
    ran = result.details if isinstance(result.details, ShellResult) else None
    if ran is None:
        return None if result.is_error else (result.content, "")
    return ran.streams(), "\n".join(ran.status_lines())


def output_tail(output: str, status: str = "", max_lines: int = OUTPUT_TAIL_LINES) -> RenderableType:
    """The last `max_lines` non-blank lines of a command's output, dimmed, under its tool line, with `… +N lines`
    before them when there were more, and its `status` lines (`Exit code 1`) after them in red. Long lines end in `…`
    (`/output` shows them whole); control characters are visible."""
    from rich.console import Group
    from rich.text import Text

    lines = [line for line in visible(output.expandtabs(4)).split("\n") if line.strip()]  # blank ones waste rows
    hidden = len(lines) - max_lines
    rows = [(f"… +{hidden} lines (/output shows them all)", "dim")] if hidden > 0 else []
    rows += [(line, "dim") for line in lines[-max_lines:]]
    rows += [(visible(line), "red") for line in status.splitlines()]
    shown: list[Text] = []
    for number, (row, style) in enumerate(rows):
        text = Text(("  ⎿ " if number == 0 else "    ") + row, style=style)
        text.no_wrap, text.overflow = True, "ellipsis"
        shown.append(text)
    return Group(*shown)


class _LiveArea:
    """What the live area shows: the unfinished Markdown block (its last lines) and the spinner."""

    def __init__(self, view: TurnView) -> None:
        self.view = view
        from rich.spinner import Spinner

        self.spinner = Spinner("dots", style="cyan")
        self._cache: tuple[str, int, list[Any]] = ("", 0, [])

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        from rich.segment import Segment
        from rich.text import Text

        view = self.view
        tail = view.stream.tail.strip("\n")
        room = max(3, console.size.height - 4)
        if tail:
            text, width, lines = self._cache
            if text != tail or width != options.max_width:
                lines = console.render_lines(markdown(tail), options, pad=False)
                self._cache = (tail, options.max_width, lines)
            if len(lines) > room:
                lines = lines[-room:]
            for line in lines:
                yield from line
                yield Segment.line()
        label = view.activity()
        if label:
            hint = f" ({elapsed(time.monotonic() - view.started)} · Ctrl+C to interrupt)"
            self.spinner.update(text=Text.assemble((label, "cyan"), (hint, "dim")))
            yield self.spinner.render(time.monotonic())


class TurnView:
    """Shows one turn's events."""

    def __init__(
        self, console: Console, describe: Callable[[ToolUseBlock], str], root: Path, *, live: bool = True
    ) -> None:
        self.console = console
        self.describe = describe
        self.root = root
        self.stream = MarkdownStream()
        self.started = time.monotonic()
        self.previewed: set[str] = set()
        """Keys (`call_key`) of calls whose diff the permission prompt already showed."""
        self.declined = ""
        """The summary of a call the user declined in this turn (the turn ends after it)."""
        self._use_live = live and console.is_terminal
        self._live: Any = None
        self._running: dict[str, str] = {}
        self._previews: dict[str, Preview | None] = {}
        self._thinking = False
        self._last = "none"
        self._printed_partial = False
        """Finished blocks of the answer now streaming were printed (a retry would leave them on screen)."""
        self.waiting = ""
        """What the turn waits for before the model is called (e.g. MCP servers starting); shown by the spinner."""
        self._heard = time.monotonic()
        """When the last event arrived (a model that goes quiet mid-answer is shown as waited for)."""
        self._agents: dict[str, list[int]] = {}
        """Agent calls running: their tool calls shown so far (a one-item list, counted in place)."""

    # ---- live area ----

    def start(self) -> None:
        if not self._use_live or self._live is not None:
            return
        from rich.live import Live

        self._live = Live(
            _LiveArea(self), console=self.console, refresh_per_second=LIVE_REFRESH_PER_SECOND, transient=True
        )
        self._live.start()

    def stop(self) -> None:
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Take the live area down (for a prompt), and put it back afterwards."""
        running = self._live is not None
        self.stop()
        self._last = "prompt"
        try:
            yield
        finally:
            if running:
                self.start()

    def activity(self) -> str:
        """The spinner's label."""
        if self.waiting:
            return self.waiting
        if self._running:
            labels = list(self._running.values())
            return labels[0] if len(labels) == 1 else f"Running {len(labels)} tools"
        if (silent := time.monotonic() - self._heard) >= WAITING_AFTER:
            return f"Waiting for the model… (nothing received for {silent:.0f}s)"
        if self.stream.tail.strip():
            return "Responding…"  # text, or a tool call's arguments still arriving after it
        return "Thinking…" if self._thinking else "Waiting for the model…"

    # ---- printing ----

    def _print(self, renderable: RenderableType | str, kind: str, **kwargs: Any) -> None:
        if self._last != kind:
            self.console.print()
        self.console.print(renderable, **kwargs)
        self._last = kind

    def _print_markdown(self, source: str) -> None:
        if source.strip():
            self._print(markdown(source), "text")
            if self._last == "text":
                self._last = "text-block"  # the next block gets a blank line between, as Markdown spaces them

    def note(self, text: str, style: str = "yellow") -> None:
        """One line that is not model output."""
        from rich.text import Text

        self._print(Text(one_line(text, 400), style=style), "note")

    # ---- events ----

    def event(self, event: QueryEvent) -> None:
        self._heard = time.monotonic()
        if isinstance(event, TextDelta):
            self._thinking = False
            for block in self.stream.feed(event.text):
                self._print_markdown(block)
                self._printed_partial = True
        elif isinstance(event, ThinkingDelta):
            self._thinking = True
        elif isinstance(event, AssistantTurn):
            self._print_markdown(self.stream.flush())
            self._thinking = False
            self._printed_partial = False
        elif isinstance(event, ToolStarted):
            use = event.tool_use
            label = self.describe(use)
            self._running[use.id] = visible(f"{use.name} {one_line(label, 80)}".strip())
            if use.name in ("Edit", "Write"):
                self._previews[use.id] = preview_for(use.name, self.root, use.input)
            if use.name in AGENT_TOOLS:  # its own calls are shown under it as they happen
                self._agents[use.id] = [0]
                self._print(tool_line(use, label), "tool", no_wrap=True, overflow="ellipsis")
        elif isinstance(event, ToolProgress):
            self._inner(event)
        elif isinstance(event, ToolFinished):
            self._tool_finished(event)
        elif isinstance(event, ToolResults):
            self._running.clear()
        elif isinstance(event, StreamRetry):
            self.stream.reset()
            lost = ""
            if event.discarded_output:  # blocks already printed stay on screen; the live tail just vanished
                lost = (
                    " (the partial answer above is incomplete)"
                    if self._printed_partial
                    else " (partial answer discarded)"
                )
            self._printed_partial = False
            self.note(
                f"retrying: {one_line(event.reason, 120)} — attempt {event.attempt}/{event.max_attempts} "
                f"in {event.delay:.1f}s{lost}"
            )
        elif isinstance(event, Notice):
            self.note(f"note: {event.text}")
        elif isinstance(event, Compacted):
            self.note(event.notice, style="dim")

    def _inner(self, progress: ToolProgress) -> None:
        """A subagent's tool call, under its Agent line (named by the agent when several run at once)."""
        from .checklist import inner_error, inner_line

        parent, event = progress.tool_use, progress.event
        counted = self._agents.setdefault(parent.id, [0])
        who = f"{parent.input.get('description', parent.name)}: " if len(self._agents) > 1 else ""
        if isinstance(event, ToolStarted):
            label = f"{event.tool_use.name} {one_line(self.describe(event.tool_use), 60)}".strip()
            self._running[parent.id] = visible(f"{parent.name} {who}{label}")
        elif isinstance(event, ToolFinished):
            label = f"{who}{event.tool_use.name} {one_line(self.describe(event.tool_use), 100)}".strip()
            first = counted[0] == 0
            counted[0] += 1
            if event.result.is_error:
                self._print(inner_error(label, error_text(event.result.content), first), "tool")
            else:
                self._print(inner_line(label, first), "tool")

    def _tool_finished(self, event: ToolFinished) -> None:
        use, result = event.tool_use, event.result
        self._running.pop(use.id, None)
        preview = self._previews.pop(use.id, None)
        label = self.describe(use)
        if use.id in self._agents:
            from .checklist import agent_done

            calls = self._agents.pop(use.id)[0]
            self._print(agent_done(calls, error_text(result.content) if result.is_error else None), "tool")
            return
        if use.name == "TodoWrite" and not result.is_error:
            from ..tools.builtin.todo import parse_todos
            from .checklist import checklist

            self._print(tool_line(use, label), "tool", no_wrap=True, overflow="ellipsis")
            self._print(checklist(parse_todos(use.input) or ()), "tool")
            return
        shell = isinstance(result.details, ShellResult) or family_named(use.name) == "shell"
        ran = bash_outcome(result) if shell and not event.denied else None
        if ran is not None:  # the command ran: its last lines, and for a failure its status (`Exit code 1`) in red
            output, status = ran if result.is_error else (result.content, "")
            self._print(
                tool_line(use, label, "" if result.is_error else None), "tool", no_wrap=True, overflow="ellipsis"
            )
            self._print(output_tail("" if result.is_error and output == NO_OUTPUT else output, status), "tool")
            return
        if result.is_error:
            self._print(tool_line(use, label, error_text(result.content)), "tool", no_wrap=True, overflow="ellipsis")
            return
        self._print(tool_line(use, label), "tool", no_wrap=True, overflow="ellipsis")
        if preview is not None and preview.lines and call_key(use.name, use.input) not in self.previewed:
            self._print(render_preview(preview, DIFF_LINES_AFTER, indent="    "), "tool")

    def finish(self, terminal: Terminal, *, interrupted: bool) -> None:
        """The turn ended: print what is left and, unless it completed, why it stopped (one line)."""
        self.stop()
        self._print_markdown(self.stream.flush())
        if terminal.reason == "aborted":
            if interrupted:
                self.note("Interrupted. The conversation goes on: type your next message.")
            elif self.declined:
                self.note(f"Turn interrupted: you declined {self.declined}. Tell the agent what to do instead.")
            elif not terminal.error:  # with one (a UserPromptSubmit hook's block), a notice said why already
                self.note("Turn interrupted.")
        elif terminal.reason == "error":
            self.note(f"error: {terminal.error}", style="bold red")
        elif terminal.reason == "max_turns":
            self.note(
                f"Stopped: reached the limit of {terminal.turns} model calls (--max-turns). Say “continue” to go on."
            )


def call_key(tool: str, args: Any) -> str:
    """Identifies a call by tool and arguments (the permission prompt sees a copy of the arguments)."""
    import json

    try:
        return tool + json.dumps(dict(args), sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return tool + repr(args)


def status_line(reading_percent: int, input_tokens: int, output_tokens: int, cost: str) -> Text:
    """`ctx ~12% · 3,400 in / 210 out tokens · $0.0123`, dim."""
    from rich.text import Text

    parts = [f"ctx ~{reading_percent}%", f"{input_tokens:,} in / {output_tokens:,} out tokens"]
    if cost:
        parts.append(cost)
    return Text(" · ".join(parts), style="dim")
