"""`/rewind [N] [both|code|conversation]`: list this conversation's turns and take the code, the conversation, or
both back to right after turn N — asking before overwriting a file someone changed since the agent did.

Without arguments it lists the turns (what each changed) and asks for the turn, then for what to restore. When both
are asked for and the code is not all back, the conversation is not rewound either, and one line says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ..checkpoints.plan import FileStep
    from ..host import SessionHost


class RewindHost(Protocol):
    """What `/rewind` needs of the REPL (`ui.repl.Repl` is one)."""

    async def ready(self) -> SessionHost: ...

    def say(self, text: str, style: str = "") -> None: ...

    async def ask(self, question: str) -> str: ...

    def recap(self, title: str) -> None: ...


CHOICES = {
    "b": "both",
    "both": "both",
    "c": "code",
    "code": "code",
    "n": "conversation",
    "conversation": "conversation",
}


async def rewind_command(repl: RewindHost, args: str) -> None:
    from ..checkpoints.conversation import CannotCut, cut_index, next_id
    from ..checkpoints.rewind import back_to, code_lines, held, listing, plan_for, rewind_code, turns
    from ..checkpoints.tracker import Checkpoints
    from ..tools.paths import display

    host = await repl.ready()
    session = host.session
    tracker = session.context.changes
    if not isinstance(tracker, Checkpoints):
        repl.say("checkpoints are off in this session (RAM_CHECKPOINTS=0): there is nothing to rewind to", "yellow")
        return
    store = tracker.store()
    cwd = session.context.cwd
    history = list(session.messages)
    try:
        summaries = await turns(store, history, tracker.running)
    except OSError as exc:
        repl.say(f"cannot rewind: the checkpoints cannot be read ({exc.strerror or exc})", "red")
        return
    if not summaries:
        repl.say("nothing to rewind: this conversation has no turn yet")
        return
    words = args.split()
    turn_word = words[0] if words else ""
    what = CHOICES.get(words[1].lower(), "") if len(words) > 1 else ""
    if len(words) > 1 and not what:
        repl.say("usage: /rewind [N] [both|code|conversation]", "yellow")
        return
    if not turn_word:
        repl.say("\n".join(["turns of this conversation (what each changed):", *listing(summaries, cwd)]))
        turn_word = (
            await repl.ask("Rewind to right after which turn? [number, 0 for the start, Enter to cancel] ")
        ).strip()
        if not turn_word:
            return
    if not turn_word.isdigit() or not 0 <= int(turn_word) <= len(summaries):
        repl.say(f"there is no turn {turn_word}: the conversation has {len(summaries)} (/rewind lists them)", "yellow")
        return
    turn = int(turn_word)
    if not what:
        question = "Restore [b]oth code and conversation, [c]ode only, co[n]versation only? [b/c/n, Enter to cancel] "
        what = CHOICES.get((await repl.ask(question)).strip().lower(), "")
        if not what:
            return
    keep = None
    if what != "code":
        try:
            keep = cut_index(history, turn)
        except CannotCut as exc:
            repl.say(str(exc), "yellow")
            return
    if what != "conversation":

        async def confirm(step: FileStep) -> bool:
            shown = display(cwd, Path(step.file))
            answer = await repl.ask(f"{shown}: {step.conflict}. Overwrite it with its content from then? [y/N] ")
            return answer.strip().lower() in ("y", "yes")

        outcome = await rewind_code(store, await plan_for(store, history, turn), confirm, workspace=cwd)
        repl.say("\n".join([f"code back {back_to(turn)}:", *code_lines(outcome, cwd)]))
        if keep is not None and outcome.left:  # never the conversation without the code it speaks of
            repl.say(held(outcome, f"/rewind {turn} conversation"), "yellow")
            return
    if keep is not None:
        dropped = len(history) - keep
        if dropped:
            host.cut_conversation(history[:keep], next_id(history, keep))
        repl.recap(f"conversation back {back_to(turn)} ({len(summaries) - turn} later turn(s) dropped)")
