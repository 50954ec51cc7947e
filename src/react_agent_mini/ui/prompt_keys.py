"""prompt_toolkit's side of the `> ` prompt: the completer, the key bindings and the two sessions `PromptInput`
reads with (the message prompt, and the one-line prompt that answers a question), and the one-key question
(`key_question`: a permission prompt's `[y/a/N]`, the trust question's `[y/N]`, answered by a single key press).

prompt_toolkit is imported at the top of this module, and this module only when `prompt.PromptInput` is built —
after the first frame is on screen (see `early.py`): nothing on the way to the idle prompt may load it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.application import Application
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, ThreadedCompleter
from prompt_toolkit.document import Document
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.styles import Style

from .completion import Candidate
from .prompt_base import PromptInterrupted

Complete = Callable[[str], Sequence[Candidate]]
"""The candidates for the text before the cursor (`completion.complete`, bound to the session)."""


def history_path() -> Path:
    from ..transcript import data_dir

    return data_dir() / "history"


def open_history() -> History:
    """The history file, kept across sessions; in memory only when it cannot be made."""
    try:
        path = history_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileHistory(str(path))
    except OSError:
        return InMemoryHistory()


class CandidateCompleter(Completer):
    """`Candidate`s as prompt_toolkit completions."""

    def __init__(self, complete: Complete) -> None:
        self.complete = complete

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        try:
            found = self.complete(document.text_before_cursor)
        except Exception:  # completion must never break typing
            return
        for item in found:
            yield Completion(
                item.text,
                start_position=-item.length,
                display=item.display or item.text,
                display_meta=item.meta,
            )


# ---- key bindings of the message prompt ----


def new_line(event: Any) -> None:
    """Esc Enter (Alt+Enter): a new line."""
    event.current_buffer.insert_text("\n")


class TabCompletion:
    """Tab: the next item of an open menu; else a single candidate taken at once, or the menu opened."""

    def __init__(self, complete: Complete) -> None:
        self.complete = complete

    def __call__(self, event: Any) -> None:
        # prompt_toolkit drops a Tab that comes while the menu's completions are still loading (typed fast,
        # or pasted), so a single candidate is taken here at once, computed on the spot.
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.completions:
            buffer.complete_next()
            return
        try:
            found = list(self.complete(buffer.document.text_before_cursor))
        except Exception:
            found = []
        if len(found) == 1:
            buffer.cancel_completion()
            buffer.delete_before_cursor(found[0].length)
            buffer.insert_text(found[0].text)
        elif found:
            buffer.cancel_completion()
            buffer.start_completion(insert_common_part=True)


def send(event: Any) -> None:
    """Enter: send the message, or after a `\\` at the end of the line, a new line instead of the `\\`."""
    buffer = event.current_buffer
    if buffer.document.is_cursor_at_the_end and buffer.text.endswith("\\"):
        buffer.delete_before_cursor(1)
        buffer.insert_text("\n")
        return
    buffer.validate_and_handle()


def clear_or_interrupt(event: Any) -> None:
    """Ctrl+C: clear the line; on an empty line, report the interrupt."""
    buffer = event.current_buffer
    if buffer.text:
        buffer.reset()
    else:
        event.app.exit(exception=PromptInterrupted())


def interrupt(event: Any) -> None:
    """Ctrl+C at a question: report the interrupt."""
    event.app.exit(exception=PromptInterrupted())


def message_keys(complete: Complete, cycle_mode: Callable[[], None]) -> KeyBindings:
    keys = KeyBindings()
    keys.add("escape", "enter")(new_line)
    keys.add("s-tab")(lambda event: cycle_mode())  # the prompt line (its mode label) is redrawn after the key
    keys.add("tab")(TabCompletion(complete))
    keys.add("enter")(send)
    keys.add("c-c")(clear_or_interrupt)
    return keys


def answer_keys() -> KeyBindings:
    keys = KeyBindings()
    keys.add("c-c")(interrupt)
    return keys


# ---- the sessions ----


def continuation(width: int, line_number: int, wrap_count: int) -> str:
    """What starts the second and later lines of a message: blanks as wide as the prompt."""
    return " " * width


def message_session(
    complete: Complete, placeholder: Callable[[], Any], cycle_mode: Callable[[], None] = lambda: None
) -> PromptSession[str]:
    """The `> ` prompt: history, completion while typing, the grey suggestion, the key bindings above (Shift+Tab
    calls `cycle_mode`)."""
    return PromptSession(
        history=open_history(),
        completer=ThreadedCompleter(CandidateCompleter(complete)),
        complete_while_typing=True,
        auto_suggest=AutoSuggestFromHistory(),
        key_bindings=message_keys(complete, cycle_mode),
        multiline=False,
        prompt_continuation=continuation,
        placeholder=placeholder,
        style=Style.from_dict({"prompt": "bold", "placeholder": "#808080", "question": "bold", "mode": "#d787ff"}),
        enable_suspend=True,
    )


def answer_session() -> PromptSession[str]:
    """The prompt for one answer line: no history, no completion; Ctrl+C interrupts."""
    return PromptSession(key_bindings=answer_keys(), style=Style.from_dict({"question": "bold"}))


def key_question(question: str, keys: str) -> Application[str]:
    """A question one key answers, as Claude Code's and Codex's prompts are: a key of `keys` (lowercase letters;
    either case is taken) gives that letter; Enter and Esc give "" (the default, which for every question asked
    this way is no); Ctrl+C raises PromptInterrupted and Ctrl+D EOFError; any other key does nothing. The key taken
    stays on screen after the question. Keys typed before the question was drawn never reach it: the caller drops
    them first (`terminal.drop_typeahead`)."""
    taken: list[str] = []

    def shown() -> StyleAndTextTuples:
        return [("class:question", question), ("", taken[0] if taken else ""), ("[SetCursorPosition]", "")]

    def answer(value: str) -> Callable[[Any], None]:
        def handler(event: Any) -> None:
            if event.app.is_done:  # a second key of the same read (`y` then Enter, typed at once)
                return
            taken.append(value)
            event.app.exit(result=value)

        return handler

    def fail(error: type[BaseException]) -> Callable[[Any], None]:
        def handler(event: Any) -> None:
            if not event.app.is_done:
                event.app.exit(exception=error())

        return handler

    bindings = KeyBindings()
    for key in keys:
        bindings.add(key)(answer(key))
        bindings.add(key.upper())(answer(key))
    for key in ("enter", "c-j", "escape"):
        bindings.add(key)(answer(""))
    bindings.add("c-c")(fail(PromptInterrupted))
    bindings.add("c-d")(fail(EOFError))
    bindings.add("<any>")(lambda event: None)
    control = FormattedTextControl(shown, show_cursor=True)
    return Application(
        layout=Layout(Window(control, dont_extend_height=True, wrap_lines=True)),
        key_bindings=bindings,
        style=Style.from_dict({"question": "bold"}),
        full_screen=False,
    )
