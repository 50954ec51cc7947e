"""A rewind, start to finish, for the REPL's `/rewind` and `ram rewind`: list the turns, put the code back, cut
the conversation, and say what was done in lines a person reads. Turn 0 is the start of the session: everything
the agent changed is undone, and the conversation is emptied. The turns are listed once the commands an earlier
process was killed during are settled (`commands.settle`), so what they changed is listed and rewound too.

Code and conversation go back together or the rewind says why not: when both are asked for and some of the code
cannot be put back (a file left as it is, one that cannot be restored, a command whose changes were not seen), the
conversation is not cut either — it would tell the model of a state the files are not in — and one line says so
and how to cut it anyway (`held`).

`rewind_code` restores every file of the plan whose content nobody changed since the agent; for one that somebody
did, `confirm` decides (the REPL asks, `ram rewind` says no unless `--force`), and a file left alone is listed.
A file whose folder now leads outside the workspace (or that is now a link, or has other hard links) is never
written or removed, nor asked about: it is left as it is and named (`restore.refusal`), and counts as not restored.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path

import msgspec

from ..messages import Message
from ..tools.paths import display
from .content import state_hash
from .git import GitFailed
from .plan import CodePlan, FileStep, TurnSummary, plan_code, summarize
from .restore import Contents, Refused, Restored, refusal, restore
from .store import CheckpointStore
from .tracker import turn_ids

Confirm = Callable[[FileStep], Awaitable[bool]]


class CodeOutcome(msgspec.Struct):
    plan: CodePlan
    restored: list[Restored] = msgspec.field(default_factory=list)
    kept: list[FileStep] = msgspec.field(default_factory=list)
    """Files someone else changed, left as they are."""
    refused: list[tuple[str, str]] = msgspec.field(default_factory=list)
    """Files left as they are because writing them could reach outside the workspace, and why."""
    failed: list[tuple[str, str]] = msgspec.field(default_factory=list)

    @property
    def left(self) -> list[str]:
        """What of the code is not back, a few words each (empty when all of it is)."""
        parts = []
        files = len(self.kept) + len(self.refused) + len(self.failed) + len(self.plan.untracked)
        if files:
            parts.append(f"{files} file{'' if files == 1 else 's'} not restored")
        if commands := len(self.plan.uncovered):
            parts.append(f"what {commands} command{'' if commands == 1 else 's'} changed not undone")
        return parts


def held(outcome: CodeOutcome, anyway: str) -> str:
    """The line saying the conversation was not rewound because the code is not all back; `anyway`: how to rewind
    the conversation alone."""
    return (
        f"conversation not rewound: the code is not all back ({', '.join(outcome.left)}), and the conversation "
        f"would no longer match it; {anyway} rewinds the conversation alone"
    )


def back_to(turn: int) -> str:
    """How a rewind names where it goes: "right after turn N", or the start for turn 0."""
    return "to the start of the session (before turn 1)" if turn == 0 else f"to right after turn {turn}"


async def plan_for(store: CheckpointStore, history: Sequence[Message], turn: int) -> CodePlan:
    contents = Contents(store)
    return await plan_code(store, turn_ids(history), turn, lambda p: state_hash(p), contents.hash_of)


async def rewind_code(store: CheckpointStore, plan: CodePlan, confirm: Confirm, *, workspace: Path) -> CodeOutcome:
    """Put back the files of `plan`, never writing or removing anything outside `workspace`."""
    outcome = CodeOutcome(plan)
    contents = Contents(store)
    for step in plan.steps:
        if why := refusal(step, workspace):
            outcome.refused.append((step.file, why))
            continue
        if step.conflict and not await confirm(step):
            outcome.kept.append(step)
            continue
        try:
            outcome.restored.append(await restore(step, contents, workspace))
        except Refused as exc:  # changed between the check above and the write
            outcome.refused.append((step.file, str(exc)))
        except (OSError, GitFailed, ValueError) as exc:
            outcome.failed.append((step.file, str(exc)))
    return outcome


def listing(summaries: Sequence[TurnSummary], cwd: Path, *, git: bool | None = None) -> list[str]:
    """The turns, numbered, each with what it changed."""
    lines = []
    for turn in summaries:
        prompt = turn.prompt if len(turn.prompt) <= 60 else turn.prompt[:59] + "…"
        changed = ", ".join(display(cwd, Path(f)) for f in turn.files[:4])
        if len(turn.files) > 4:
            changed += f" and {len(turn.files) - 4} more"
        if turn.uncovered:
            changed += ("; " if changed else "") + f"{len(turn.uncovered)} command(s) not covered"
        lines.append(f"  {turn.number:2d}. {prompt:<60}  {changed or '(no file changes)'}")
    if git is False and any(t.uncovered for t in summaries):
        lines.append("  (not a git repository: what Bash commands changed cannot be seen, so it is not rewound)")
    return lines


def code_lines(outcome: CodeOutcome, cwd: Path) -> list[str]:
    """What a code rewind did."""
    lines = []
    for done in outcome.restored:
        shown = display(cwd, Path(done.file))
        lines.append(f"  removed {shown} (it did not exist then)" if done.removed else f"  restored {shown}")
    for step in outcome.kept:
        lines.append(f"  left {display(cwd, Path(step.file))} as it is: {step.conflict}")
    for file, why in outcome.refused:
        lines.append(f"  left {display(cwd, Path(file))} as it is: {why}")
    for file, why in outcome.failed:
        lines.append(f"  could not restore {display(cwd, Path(file))}: {why}")
    for file, why in outcome.plan.untracked:
        lines.append(f"  cannot restore {display(cwd, Path(file))}: {why}")
    for command in outcome.plan.uncovered:
        lines.append(f"  not undone (no git snapshot): what `{command}` changed")
    if not lines:
        lines.append("  no file needed changing")
    return lines


async def turns(store: CheckpointStore, history: Sequence[Message], running: Collection[str] = ()) -> list[TurnSummary]:
    """The turns of `history`, each with what it changed, once the commands cut off by an earlier process (all but
    those in `running`) are settled."""
    from .commands import settle

    await settle(store, running)
    return summarize(history, store)
