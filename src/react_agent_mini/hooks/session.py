"""A session's hooks: the settings files' command hooks joined to those a driving program registers, and the
events fired from parts that know nothing of hooks themselves.

- PreToolUse / PostToolUse run in the tool runner, UserPromptSubmit in the session, Stop and SubagentStop in the
  loop, SessionStart and SessionEnd in the host (`host.SessionHost`).
- PreCompact runs here, through the compaction's seam, right before a summary is made (trigger `manual` for
  `/compact`, `auto` otherwise; `custom_instructions` is the user's focus); so does SessionStart with source
  `compact` (Claude Code runs it once the summary is made): its context is put back after the summary, with the
  loaded skills and the task list.
- Notification runs here, through the permission policy's seam, when a permission prompt is shown
  (`notification_type: permission_prompt`), and from the REPL when it has waited for input a while (`idle_prompt`).
  Notification hooks run in the background: the prompt they announce does not wait for them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ..compact.controller import Compaction, Trigger
from ..messages import Message, user_text
from ..permissions.policy import PermissionPolicy, PermissionRequest
from ..tools.base import ShellState
from .runner import Hooks

if TYPE_CHECKING:
    from .command.config import LoadedHooks

NOTIFY_PERMISSION = "permission_prompt"
SESSION_START_CONTEXT = "SessionStart hook additional context: "
NOTIFY_IDLE = "idle_prompt"


def session_hooks(
    cwd: Path,
    given: Hooks | None,
    loaded: LoadedHooks,
    *,
    shell: ShellState,
    warnings: list[str],
) -> Hooks | None:
    """The caller's hooks (`given`) with the settings files' command hooks (`loaded`, the ones the folder's trust
    lets run) added; None when there are none at all (nothing to run, nothing to pay for)."""
    warnings += loaded.warnings
    if not loaded.hooks:
        return given
    from ..tools.shell_env import command_environment
    from .command.config import project_hooks_line
    from .command.run import hook_entry

    def environment() -> Mapping[str, str]:  # as Bash commands get it: ram's own credentials withheld
        return command_environment(os.environ, shell.withheld)

    hooks = given if given is not None else Hooks()
    hooks.entries[:0] = [hook_entry(spec, cwd, environment) for spec in loaded.hooks]
    line = project_hooks_line(loaded.hooks)
    if line:
        warnings.append(line)
    return hooks


def wire(hooks: Hooks, compaction: Compaction, policy: PermissionPolicy) -> None:
    """Fire PreCompact (and SessionStart `compact`) before summaries and Notification when a permission prompt is
    shown."""
    after_summary: list[Message] = []
    """The SessionStart `compact` hooks' context, put back with the rest after a summary."""
    reinject = compaction.reinject

    async def pre_compact(trigger: Trigger, focus: str) -> list[str]:
        said: list[str] = []
        if hooks.active("PreCompact", trigger):
            verdict = await hooks.run("PreCompact", {"trigger": trigger, "custom_instructions": focus}, trigger)
            said += verdict.messages
        if hooks.active("SessionStart", "compact"):
            started = await hooks.run("SessionStart", {"source": "compact"}, "compact")
            said += started.messages
            after_summary[:] = [user_text(f"{SESSION_START_CONTEXT}{text}", meta=True) for text in started.context]
        return said

    def reinjected() -> list[Message]:
        return [*(reinject() if reinject is not None else ()), *after_summary]

    def asking(request: PermissionRequest) -> None:
        notify(hooks, f"ram needs your permission to use {request.tool}", NOTIFY_PERMISSION)

    compaction.pre_compact = pre_compact
    compaction.reinject = reinjected
    policy.on_ask = asking


def notify(hooks: Hooks, message: str, kind: str) -> None:
    """Run the Notification hooks for `kind` in the background."""
    hooks.fire("Notification", {"message": message, "notification_type": kind}, kind)
